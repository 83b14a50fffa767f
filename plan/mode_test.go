package plan

import (
	"testing"

	"github.com/inferload/inferload/record"
)

// TestLoadMode checks the one derivation of a run's loop.
func TestLoadMode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		load LoadOptions
		want string
	}{
		// Users and no schedule: closed.
		{"users", LoadOptions{Concurrency: 8}, record.ModeClosed},
		// A rate is a schedule: open.
		{"rate", LoadOptions{Rate: 4}, record.ModeOpen},
		// A replayed trace is open, though it has no rate (the stages and
		// the rebuild once read it as closed).
		{"trace", LoadOptions{Trace: Trace{Path: "t.jsonl"}}, record.ModeOpen},
		// Compute pacing is open too (the rebuild once read it as closed).
		{"flops", LoadOptions{FLOPsPerS: 1e15}, record.ModeOpen},
	}
	for _, tt := range tests {
		if got := tt.load.Mode(); got != tt.want {
			t.Errorf("%s: Mode() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestLoadShape checks the one derivation of a load's shape, and the facts
// that follow from it: the loop, the level, and whether the load ends by
// itself.
func TestLoadShape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		load      LoadOptions
		shape     Shape
		open      bool
		level     float64
		playsOnce bool
	}{
		// Users: a closed loop at its number of users.
		{"users", LoadOptions{Concurrency: 8}, ShapeUsers, false, 8, false},
		// Users whose number is set by stages alone: still users, level 0.
		{"staged users", LoadOptions{Stages: []string{"10s@4"}}, ShapeUsers, false, 0, false},
		// A rate: an open loop at its requests/s.
		{"rate", LoadOptions{Rate: 4}, ShapeRate, true, 4, false},
		// Compute pacing: open, and no single rate the plan states.
		{"compute", LoadOptions{FLOPsPerS: 1e15}, ShapeCompute, true, 0, false},
		// A trace played once ends by itself.
		{"trace", LoadOptions{Trace: Trace{Path: "t.jsonl"}}, ShapeTrace, true, 0, true},
		// A looped trace does not.
		{"looped trace", LoadOptions{Trace: Trace{Path: "t.jsonl", Loop: true}}, ShapeTrace, true, 0, false},
		// Two shapes (a plan validation refuses): the trace wins, as the
		// run would build it.
		{"trace and rate", LoadOptions{Rate: 2, Trace: Trace{Path: "t.jsonl"}}, ShapeTrace, true, 0, true},
	}
	for _, tt := range tests {
		l := tt.load
		if got := l.Shape(); got != tt.shape {
			t.Errorf("%s: Shape() = %q, want %q", tt.name, got, tt.shape)
		}
		if got := l.OpenLoop(); got != tt.open {
			t.Errorf("%s: OpenLoop() = %v, want %v", tt.name, got, tt.open)
		}
		if got := l.Level(); got != tt.level {
			t.Errorf("%s: Level() = %v, want %v", tt.name, got, tt.level)
		}
		if got := l.PlaysOnce(); got != tt.playsOnce {
			t.Errorf("%s: PlaysOnce() = %v, want %v", tt.name, got, tt.playsOnce)
		}
	}
}
