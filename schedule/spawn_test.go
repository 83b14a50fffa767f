package schedule

import (
	"testing"
	"time"
)

func TestSpawnRate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		added  int
		warmup time.Duration
		rate   float64
		want   float64
	}{
		// 16 users over half of a 10 s warm-up: 3.2 users/s.
		{"default spreads over half the warm-up", 16, 10 * time.Second, 0, 3.2},
		// load.spawn_rate wins over the default.
		{"set rate", 16, 10 * time.Second, 4, 4},
		// No warm-up to spread them over: all at once.
		{"no warm-up", 16, 0, 0, 0},
		// A load that falls adds no user.
		{"nothing added", 0, 10 * time.Second, 0, 0},
	}
	for _, tt := range tests {
		if got := SpawnRate(tt.added, tt.warmup, tt.rate); got != tt.want {
			t.Errorf("%s: SpawnRate(%d, %s, %g) = %g, want %g", tt.name, tt.added, tt.warmup, tt.rate, got, tt.want)
		}
	}
}
