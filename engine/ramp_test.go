package engine

import (
	"testing"
	"time"
)

// TestClosedLoopRamp: with Active set, only the active users send. A ramp
// that holds 2 users for the first half and 6 for the second never has
// more than 2 in flight early, and reaches 6 later.
func TestClosedLoopRamp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		users     func(time.Duration) int
		wantEarly int64 // requests started per 20 ms slot in the first 300 ms
		wantLate  int64 // the same after 300 ms (past the step and a poll)
		wantPeak  int64 // most in flight over the phase
	}{
		// A step from 2 to 6 users half-way.
		{"step 2 to 6", func(d time.Duration) int {
			if d < 300*time.Millisecond {
				return 2
			}
			return 6
		}, 2, 6, 6},
		// A function returning more than Users is capped by it.
		{"over the cap", func(time.Duration) int { return 100 }, 6, 6, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			simulated(t, func(t *testing.T) {
				client := &serviceClient{service: 20 * time.Millisecond}
				rs := collect(t, Config{Client: client, Source: fixedSource{}, Render: render, Clock: TimerClock{},
					Shape: ClosedLoop{Users: 6, Active: tt.users}, Duration: 600 * time.Millisecond}, t.Context())
				byStart := map[int64]int64{}
				for _, r := range rs {
					byStart[r.SendUS/20_000]++ // requests started per 20 ms slot = users active then
				}
				for slot := int64(0); slot < 30; slot++ {
					want := tt.wantEarly
					if slot >= 16 { // 320 ms: the newly active users woke from their 5 ms poll
						want = tt.wantLate
					}
					if slot == 15 { // 300–320 ms: the step happens inside this slot
						continue
					}
					if byStart[slot] != want {
						t.Errorf("slot %d (%d ms): %d requests started, want %d", slot, slot*20, byStart[slot], want)
					}
				}
				if got := client.peak.Load(); got != tt.wantPeak {
					t.Errorf("peak in flight %d, want %d", got, tt.wantPeak)
				}
			})
		})
	}
}
