package record

import (
	"math"
	"testing"
)

// The applied load comes from the records alone: the mean number in flight
// for a closed loop, the issue rate for an open one.
func TestAchievedLoad(t *testing.T) {
	t.Parallel()
	closed := NewAggregate()
	// two users, each busy the whole 10 s window: 20 requests of 1 s each
	for u := range 2 {
		for k := range 10 {
			closed.Add(&Result{ID: uint64(u*10 + k), SendUS: int64(k) * 1e6, E2EUS: 1e6})
		}
	}
	if got := closed.AchievedLoad(RunInfo{Mode: ModeClosed, MeasureEndUS: 10e6, EndUS: 10e6}); math.Abs(got-2) > 1e-9 {
		t.Errorf("closed loop: achieved %.3f users, want 2", got)
	}
	open := NewAggregate()
	// 50 requests due 100 ms apart over 5 s: 10 requests/s, whatever their latency
	for k := range 50 {
		open.Add(&Result{ID: uint64(k), OpenLoop: true, IntendedUS: int64(k) * 100_000, SendUS: int64(k)*100_000 + 500, E2EUS: 2e6})
	}
	if got := open.AchievedLoad(RunInfo{Mode: ModeOpen, MeasureEndUS: 5e6, EndUS: 8e6}); math.Abs(got-10) > 1e-9 {
		t.Errorf("open loop: achieved %.3f requests/s, want 10", got)
	}
}
