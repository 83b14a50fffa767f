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
