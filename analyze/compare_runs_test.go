package analyze

import (
	"math"
	"math/rand/v2"
	"testing"
)

// driftRun is a run of n requests whose latencies follow a level that
// wanders in blocks of 500 requests (a busy host: each stretch of the run
// is uniformly faster or slower, σ 15%), times slow: the values are
// serially correlated, which the figure's own test does not see.
func driftRun(rng *rand.Rand, name string, n int, slow float64) *RunSamples {
	rs := NewRunSamples(name)
	s := rs.Overall
	level := 1.0
	for i := range n {
		if i%500 == 0 {
			level = math.Exp(0.15 * rng.NormFloat64())
		}
		v := 100 * slow * level * math.Exp(0.3*rng.NormFloat64())
		s.TTFT = append(s.TTFT, v)
		s.E2E = append(s.E2E, 4*v)
		s.failedAt = append(s.failedAt, false)
		s.Succeeded++
	}
	for range 60 {
		rs.OutputTokensPerS = append(rs.OutputTokensPerS, 100/slow*(1+0.05*rng.NormFloat64()))
		rs.RequestsPerS = append(rs.RequestsPerS, 10/slow*(1+0.05*rng.NormFloat64()))
	}
	return rs
}

// TestRunsCheckOnDrift: on A/A pairs of drifting runs the figures' own
// tests call many differences, which the batch-means check turns into
// "cannot tell" (no regression); a planted 40% slowdown still regresses;
// with the check off the same A/A pairs regress. Rates over 20 pairs,
// seeded, so the test is deterministic.
func TestRunsCheckOnDrift(t *testing.T) {
	t.Parallel()
	const pairs = 20
	limits := []Limit{{Metric: "ttft_ms.p50", Relative: 0.05}, {Metric: "e2e_ms.p90", Relative: 0.05}}
	var aa, aaOff, caught, cannot int
	for i := range pairs {
		rng := rand.New(rand.NewPCG(uint64(i), 11))
		a, b := driftRun(rng, "a", 4000, 1), driftRun(rng, "b", 4000, 1)
		slow := driftRun(rng, "s", 4000, 1.4)
		c := Compare(a, b, CompareOptions{Limits: limits})
		if c.Regressions > 0 {
			aa++
		}
		cannot += len(c.CannotTell())
		if Compare(a, b, CompareOptions{Limits: limits, NoRunsCheck: true}).Regressions > 0 {
			aaOff++
		}
		if Compare(a, slow, CompareOptions{Limits: limits}).Regressions > 0 {
			caught++
		}
		if n := disagreements(c); n > 0 {
			t.Fatalf("pair %d: %d deltas whose p, interval and verdict disagree", i, n)
		}
	}
	t.Logf("A/A regressed %d/%d with the check, %d/%d without; %d cannot-tell; 40%% slowdown caught %d/%d", aa, pairs, aaOff, pairs, cannot, caught, pairs)
	if aa > 1 {
		t.Errorf("A/A pairs regressed %d of %d times with the runs check: want at most 1", aa, pairs)
	}
	if aaOff < pairs/4 {
		t.Errorf("without the check only %d of %d A/A pairs regressed: the drift is too weak to test the check", aaOff, pairs)
	}
	if cannot == 0 {
		t.Error("no figure was 'cannot tell': the check never overruled its own test")
	}
	if caught < pairs*9/10 {
		t.Errorf("a 40%% slowdown was caught in %d of %d pairs: want 9 in 10", caught, pairs)
	}
}

// TestCompareRepeats: with three runs a side whose levels differ from
// run to run (σ 10%), the runs are the units: A/A splits do not regress;
// a 60% slowdown of every current run does; the comparison says how many
// runs each side had and the check's test is between-runs.
func TestCompareRepeats(t *testing.T) {
	t.Parallel()
	limits := []Limit{{Metric: "ttft_ms.p50", Relative: 0.05}}
	side := func(rng *rand.Rand, slow float64) []*RunSamples {
		var out []*RunSamples
		for range 3 {
			out = append(out, driftRun(rng, "r", 2000, slow*math.Exp(0.1*rng.NormFloat64())))
		}
		return out
	}
	var aa, caught int
	const splits = 20
	for i := range splits {
		rng := rand.New(rand.NewPCG(uint64(i), 12))
		base := side(rng, 1)
		c := CompareRuns(base, side(rng, 1), CompareOptions{Limits: limits})
		if c.BaselineRuns != 3 || c.CurrentRuns != 3 || c.Batches != 0 {
			t.Fatalf("runs %d/%d batches %d: want 3, 3 and no batches", c.BaselineRuns, c.CurrentRuns, c.Batches)
		}
		if d := c.Deltas[indexDelta(c.Deltas, "ttft_ms.p50")]; d.Runs == nil || d.Runs.Test != TestBetweenRuns || d.Runs.BaselineUnits != 3 {
			t.Fatalf("ttft_ms.p50 runs check %+v: want between-runs on 3 units", d.Runs)
		}
		if c.Regressions > 0 {
			aa++
		}
		if CompareRuns(base, side(rng, 1.6), CompareOptions{Limits: limits}).Regressions > 0 {
			caught++
		}
	}
	t.Logf("A/A regressed %d/%d; 60%% slowdown caught %d/%d", aa, splits, caught, splits)
	if aa > 1 || caught < splits*3/4 {
		t.Errorf("A/A regressed %d of %d, a 60%% slowdown caught %d of %d: want at most 1 and at least 3 in 4", aa, splits, caught, splits)
	}
}

// TestWelch checks the t test against values worked by hand: means 10
// and 12, variances 4 and 9 over 5 and 6 units: se² = 0.8 + 1.5 = 2.3,
// df = 2.3² / (0.8²/4 + 1.5²/5) = 8.82..., and a side of one unit takes
// the other side's variance with df = n − 1.
func TestWelch(t *testing.T) {
	t.Parallel()
	base := []float64{8, 9, 10, 11, 12}     // mean 10, variance 2.5
	cur := []float64{9, 10, 11, 13, 14, 15} // mean 12, variance 5.6
	diff, lo, hi, p, df := welch(base, cur, 0.95)
	se2 := 2.5/5 + 5.6/6
	wantDF := se2 * se2 / (math.Pow(2.5/5, 2)/4 + math.Pow(5.6/6, 2)/5)
	if diff != 2 || math.Abs(df-wantDF) > 1e-9 || !(lo < 0 && hi > 4) || p < 0.05 || p > 0.2 {
		t.Errorf("welch: diff %v [%v, %v] p %v df %v; want 2, df %v, an interval across 0, p about 0.1", diff, lo, hi, p, df, wantDF)
	}
	if _, _, _, _, df := welch([]float64{10}, cur, 0.95); df != 5 {
		t.Errorf("one baseline unit: df %v, want 5 (the current side's n − 1)", df)
	}
	if d, _, _, p, _ := welch([]float64{3, 3}, []float64{3, 3}, 0.95); d != 0 || p != 1 {
		t.Errorf("no spread, no difference: diff %v p %v, want 0 and 1", d, p)
	}
}
