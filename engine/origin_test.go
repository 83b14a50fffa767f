package engine

import (
	"context"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// A phase given an Origin 10 ms before it runs (a stage taking over from
// one that stopped issuing then) keeps its schedule on that time zero:
// the arrival due at 0 goes out at once, 10 ms late as queue delay, the
// one due at 20 ms on time, and the phase ends Duration after Origin.
func TestOriginKeepsTheSchedule(t *testing.T) {
	simulated(t, func(t *testing.T) {
		origin := time.Now().Add(-10 * time.Millisecond)
		arr := &offsets{at: []time.Duration{0, 20 * time.Millisecond, never}}
		eng, err := New(Config{Client: &serviceClient{service: time.Millisecond}, Source: fixedSource{}, Render: render,
			Clock: TimerClock{}, Shape: OpenLoop{Arrivals: arr, LateAfter: time.Millisecond}, Duration: 50 * time.Millisecond,
			Origin: origin})
		if err != nil {
			t.Fatal(err)
		}
		out := make(chan *record.Result, 8)
		go func() { _ = eng.Run(context.Background(), out) }()
		var got [][3]int64
		for r := range out {
			got = append(got, [3]int64{r.IntendedUS / 1000, r.SendUS / 1000, r.QueueDelayUS / 1000})
		}
		if !eng.Started().Equal(origin) {
			t.Errorf("time zero %v, want the origin %v", eng.Started(), origin)
		}
		want := [][3]int64{{0, 10, 10}, {20, 20, 0}}
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("records (intended, sent, queue delay ms) %v, want %v", got, want)
		}
		if us := eng.StoppedIssuingUS(); us != 50_000 {
			t.Errorf("issuing stopped at %d µs, want 50000 (Duration after the origin)", us)
		}
	})
}
