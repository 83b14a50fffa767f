package experiment

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
)

// TestFindCapacity: find-capacity against the simulator over HTTP in
// wall-clock time. What it finds depends on how fast the host let the
// client and the simulator go, so the planted capacity is tested on
// virtual time (TestVirtualFindCapacity); here every assertion holds at
// any speed: the answer is the search rule over the probes it ran, the
// search converged (a whole-user answer with the user above it failing),
// no probe passed with fewer samples than its percentile needs, and a
// probe too short for a P99 never claims one (a slower host only makes
// it shorter of samples).
func TestFindCapacity(t *testing.T) {
	t.Parallel()
	url := smallSim(t, 8)
	tests := []struct {
		name   string
		slo    string
		search analyze.SearchOptions
		probe  time.Duration
		reason string // when set, the answer's reason must say it
	}{
		// Converges somewhere (8..15 users on an idle host).
		{"converges", "e2e.p90<=80ms", analyze.SearchOptions{Low: 4, High: 32, Whole: true}, 800 * time.Millisecond, ""},
		// With a confirmation: an answer found is probed again
		// (checkConfirmed); a host slow enough to fail 4 users leaves
		// nothing to confirm.
		{"confirms", "e2e.p90<=80ms", analyze.SearchOptions{Low: 4, High: 32, Whole: true, MaxProbes: 14, Confirm: 1}, 800 * time.Millisecond, ""},
		// A 0.4 s probe at 4 users gets a few dozen replies: no P99 claim, however fast they were.
		{"too few samples for p99", "e2e.p99<=1s", analyze.SearchOptions{Low: 4, High: 4, Whole: true}, 400 * time.Millisecond, "299 needed"},
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
			checkSearchConverged(t, c, tt.search)
			checkConfirmed(t, c, tt.search)
			expectRebuildIdentical(t, out.Dir)
			if !strings.Contains(c.Reason, tt.reason) {
				t.Errorf("reason %q, want it to say %q", c.Reason, tt.reason)
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

// checkSearchConverged: a search ends on an answer it probed and passed,
// with the lowest failed load above it within the search's precision (a
// whole-user search: the user above it), unless the answer is the top of
// the range; one that found nothing failed its lowest load.
func checkSearchConverged(t *testing.T, c *record.Capacity, o analyze.SearchOptions) {
	t.Helper()
	passed := map[float64]bool{}
	failedAbove := math.Inf(1)
	for _, pr := range c.Probes {
		passed[pr.Load] = pr.Passed
		if !pr.Passed && pr.Load > c.Load {
			failedAbove = min(failedAbove, pr.Load)
		}
	}
	if !c.Found {
		if ok, probed := passed[o.Low]; !probed || ok {
			t.Errorf("no answer, but the lowest load %v was not probed and failed: %+v", o.Low, c.Probes)
		}
		return
	}
	precision := cmp.Or(o.Precision, analyze.DefaultSearch.Precision)
	converged := failedAbove/c.Load <= 1+precision || (o.Whole && failedAbove-c.Load <= 1)
	if !passed[c.Load] || (c.Load < o.High && !converged) {
		t.Errorf("answer %v: want it probed and passed, and the lowest failure above it (%v) within the precision: %+v", c.Load, failedAbove, c.Probes)
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

// checkConfirmed: with o.Confirm, an answer found was probed again (some
// probe is a confirmation) and the reason says whether it was confirmed,
// whatever the host's speed made the verdicts.
func checkConfirmed(t *testing.T, c *record.Capacity, o analyze.SearchOptions) {
	t.Helper()
	if o.Confirm == 0 || !c.Found {
		return
	}
	if !slices.ContainsFunc(c.Probes, func(p record.CapacityProbe) bool { return p.Confirmation }) ||
		!(strings.Contains(c.Reason, "confirmed") || strings.Contains(c.Reason, "UNCONFIRMED")) {
		t.Errorf("answer %v with --confirm %d: want a confirmation probe and the reason to say confirmed or UNCONFIRMED: %q", c.Load, o.Confirm, c.Reason)
	}
}
