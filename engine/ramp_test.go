package engine

import (
	"context"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// TestClosedLoopRamp: with Users set, only the active users send. A ramp
// that holds 2 users for the first half and 6 for the second never has
// more than 2 in flight early, and reaches 6 later.
func TestClosedLoopRamp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		users     func(time.Duration) int
		wantEarly int64 // most in flight among requests sent in the first half
		wantPeak  int64 // most in flight over the phase
	}{
		// A step from 2 to 6 users half-way.
		{"step 2 to 6", func(d time.Duration) int {
			if d < 300*time.Millisecond {
				return 2
			}
			return 6
		}, 2, 6},
		// A function returning more than Concurrency is capped by it.
		{"over the cap", func(time.Duration) int { return 100 }, 6, 6},
	}
	for _, tt := range tests {
		client := &serviceClient{service: 20 * time.Millisecond}
		eng, err := New(Config{Client: client, Source: fixedSource{}, Render: render,
			Concurrency: 6, Users: tt.users, Duration: 600 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		out := make(chan *record.Result, 1024)
		go func() { _ = eng.Run(context.Background(), out) }()
		var early int64
		byStart := map[int64]int64{}
		for r := range out {
			byStart[r.SendUS/20_000]++ // requests started per 20 ms slot ≈ users active then
		}
		for slot, n := range byStart {
			if slot*20_000 < 250_000 {
				early = max(early, n)
			}
		}
		if early > tt.wantEarly {
			t.Errorf("%s: %d requests started in one early 20 ms slot, want at most %d", tt.name, early, tt.wantEarly)
		}
		if got := client.peak.Load(); got != tt.wantPeak {
			t.Errorf("%s: peak in flight %d, want %d", tt.name, got, tt.wantPeak)
		}
	}
}
