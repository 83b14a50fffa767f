package capacity

import (
	"strings"
	"testing"
)

// TestLevelsDisagree: levels at one batch must deliver one throughput;
// the rule names a pair that does not, and keeps quiet where the batch
// grew (a server that batches more delivers more) or nothing was scraped.
func TestLevelsDisagree(t *testing.T) {
	t.Parallel()
	step := func(users int, batch, rps float64) FitStep {
		return FitStep{Users: users, Batch: batch, Throughput: rps}
	}
	tests := []struct {
		name  string
		steps []FitStep
		want  string // "" for no warning
	}{
		{"the real 1-slot sweep of TRUTH.md", []FitStep{step(1, 0.9, 4.67), step(2, 1.0, 6.49), step(3, 1.0, 7.67)},
			"at 1 and 3 users the server ran about 0.9 sequences at once, yet delivered 4.67 and 7.67 requests/s (+64%)"},
		{"one batch, one throughput", []FitStep{step(1, 0.95, 7.5), step(2, 1.0, 7.9), step(3, 1.0, 8.1)}, ""},
		{"the batch grew with the users", []FitStep{step(1, 1, 5), step(2, 2, 9), step(4, 4, 15)}, ""},
		{"a full server, then a noisy level", []FitStep{step(1, 1, 5), step(4, 4, 12), step(8, 4, 16), step(16, 4, 12.5)},
			"at 4 and 8 users the server ran about 4.0 sequences at once, yet delivered 12.00 and 16.00 requests/s (+33%)"},
		{"nothing scraped", []FitStep{step(1, 0, 4.67), step(3, 0, 7.67)}, ""},
		{"a single level", []FitStep{step(2, 1, 6)}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := levelsDisagree(tc.steps)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}
