package engine

import (
	"context"
	"testing"
	"time"
)

// TestClockContract: both clocks keep the contract the engine relies on.
// Real time, but nothing depends on how late a wake-up is: only that it is
// never early and that a done ctx wins.
func TestClockContract(t *testing.T) {
	t.Parallel()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	live := context.Background()
	clocks := map[string]Clock{"precise": PreciseClock{}, "timer": TimerClock{}}
	tests := []struct {
		name string
		ctx  context.Context
		in   time.Duration // deadline from now
		want bool
	}{
		// A deadline already past returns at once, reporting true.
		{"past deadline", live, -time.Second, true},
		// A deadline past with ctx done reports false: a stopping run
		// issues nothing more even when a request is due.
		{"past deadline, ctx done", canceled, -time.Second, false},
		// A done ctx ends a long wait at once.
		{"ctx done", canceled, time.Hour, false},
		// A deadline inside the precise clock's nanosleep and spin margins
		// (under 2 ms): reached, and never early.
		{"short wait", live, 1500 * time.Microsecond, true},
		// A deadline beyond the margins: the timer stage runs first.
		{"long wait", live, 3 * time.Millisecond, true},
	}
	for name, c := range clocks {
		for _, tt := range tests {
			deadline := c.Now().Add(tt.in)
			for _, wait := range []func(context.Context, time.Time) bool{c.SleepUntil, c.PaceUntil} {
				if got := wait(tt.ctx, deadline); got != tt.want {
					t.Errorf("%s, %s: got %v, want %v", name, tt.name, got, tt.want)
				}
				if tt.want && time.Now().Before(deadline) {
					t.Errorf("%s, %s: woke before the deadline", name, tt.name)
				}
			}
		}
	}
}
