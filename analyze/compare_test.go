package analyze

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompareFlagsPlantedSlowdown(t *testing.T) {
	t.Parallel()
	base := plant{seed: 1, slowdown: 1, users: 48}.samples("base")
	slow := plant{seed: 2, slowdown: 1.15, users: 48}.samples("slow")
	c := Compare(base, slow, CompareOptions{})
	if c.Verdict() != "regression" {
		t.Fatalf("a 15%% slowdown passed: %v", c.Deltas)
	}
	// ITL and E2E P99 and tokens/s see the slowdown whatever the seeds.
	// (The P99 of ~3000 TTFTs rests on ~30 values: it resolves a 15%
	// shift only about 7 times in 10, so it is not asserted here.)
	for _, metric := range []string{"itl_ms.p99", "e2e_ms.p99", "output_tokens_per_s"} {
		d := deltaOf(t, c, metric)
		if !d.Regression {
			t.Errorf("%s not flagged: %v", metric, d)
		}
	}
	// The interval of the E2E P99 difference holds the planted 15%.
	d := deltaOf(t, c, "e2e_ms.p99")
	if planted := 0.15 * d.Baseline; planted < d.DiffLow || planted > d.DiffHigh {
		t.Errorf("e2e p99 interval [%.0f, %.0f] misses the planted +%.0f ms", d.DiffLow, d.DiffHigh, planted)
	}
}

func TestCompareIgnoresNoise(t *testing.T) {
	t.Parallel()
	// Two samples of the same distribution, from different seeds.
	a := plant{seed: 3, slowdown: 1, users: 48}.samples("a")
	b := plant{seed: 4, slowdown: 1, users: 48}.samples("b")
	c := Compare(a, b, CompareOptions{})
	if c.Regressions != 0 || c.Verdict() != "pass" {
		t.Fatalf("noise flagged as regression: %v", c.Worse())
	}
	for _, d := range c.Deltas {
		if d.Relative != nil && math.Abs(*d.Relative) > 0.10 && d.Metric != "failure_rate" {
			t.Errorf("noise moved %v by more than 10%%", d)
		}
	}
}

func TestCompareIsRepeatable(t *testing.T) {
	t.Parallel()
	a := plant{seed: 5, slowdown: 1, users: 4, classes: []string{"chat", "doc"}}.samples("a")
	b := plant{seed: 6, slowdown: 1.05, users: 4, classes: []string{"chat", "doc"}, failEvery: 20}.samples("b")
	first := Compare(a, b, CompareOptions{Seed: 9})
	second := Compare(a, b, CompareOptions{Seed: 9})
	if diff := cmp.Diff(first, second); diff != "" {
		t.Fatalf("same runs and seed, different comparison (-first +second):\n%s", diff)
	}
	// Per-class rows appear when the runs have classes.
	deltaOf(t, first, "classes.chat.ttft_ms.p99")
	deltaOf(t, first, "classes.doc.failure_rate")
	// The planted failures (1 in 20) are a significant, worse failure rate.
	if d := deltaOf(t, first, "failure_rate"); d.Change != "worse" || d.Test != TestTwoProportion {
		t.Errorf("failure rate 0 → 5%% not seen as worse: %v", d)
	}
}

func TestCompareLimits(t *testing.T) {
	t.Parallel()
	base := plant{seed: 1, slowdown: 1, users: 8}.samples("base")
	slow := plant{seed: 2, slowdown: 1.15, users: 8}.samples("slow")
	tests := []struct {
		name   string
		limits []Limit
		want   []string // metrics that regress
		unused []string
	}{
		// No limits: nothing can fail, however much worse.
		{name: "none", limits: []Limit{}, want: nil},
		// A generous limit lets a 15% slowdown pass.
		{name: "generous", limits: []Limit{{Metric: "e2e_ms.p99", Relative: 0.5}}, want: nil},
		// An absolute limit in ms: 15% of a ~1.3 s P50 is far beyond 50 ms.
		{name: "absolute", limits: []Limit{{Metric: "e2e_ms.p50", Absolute: true, Value: 50}}, want: []string{"e2e_ms.p50"}},
		// A limit on a class neither run has checks nothing, and says so.
		{name: "unused", limits: []Limit{{Metric: "classes.nope.e2e_ms.p99", Relative: 0.1}}, unused: []string{"classes.nope.e2e_ms.p99=10%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(base, slow, CompareOptions{Limits: tt.limits})
			if diff := cmp.Diff(tt.want, c.Worse()); diff != "" {
				t.Errorf("regressions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.unused, c.UnusedLimits); diff != "" {
				t.Errorf("unused limits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompareAccuracyAndTTFO: graded runs get an accuracy row (a
// two-proportion test, higher is better) that a limit can gate, and runs
// of a reasoning model a time-to-first-answer row; runs that did neither
// get neither row.
func TestCompareAccuracyAndTTFO(t *testing.T) {
	t.Parallel()
	base := plant{seed: 1, slowdown: 1, users: 16, accuracy: 0.95, reasoning: 10}.samples("base")
	worse := plant{seed: 2, slowdown: 1.2, users: 16, accuracy: 0.85, reasoning: 10}.samples("worse")
	same := plant{seed: 3, slowdown: 1, users: 16, accuracy: 0.95, reasoning: 10}.samples("same")
	plain := plant{seed: 4, slowdown: 1, users: 16}.samples("plain")
	limits := []Limit{{Metric: "accuracy", Absolute: true, Value: 0.05}}

	c := Compare(base, worse, CompareOptions{Limits: limits})
	acc := deltaOf(t, c, "accuracy")
	if acc.Change != "worse" || !acc.Regression || acc.Test != TestTwoProportion || acc.Baseline < 0.9 || acc.Current > 0.9 {
		t.Errorf("accuracy 95%% → 85%%: %v, regression %v", acc, acc.Regression)
	}
	if d := deltaOf(t, c, "ttfo_ms.p50"); d.Change != "worse" || d.Baseline <= deltaOf(t, c, "ttft_ms.p50").Baseline {
		t.Errorf("TTFO p50 after 10 reasoning events, 20%% slower: %v (TTFT p50 %v)", d, deltaOf(t, c, "ttft_ms.p50"))
	}
	if c := Compare(base, same, CompareOptions{Limits: limits}); c.Regressions != 0 {
		t.Errorf("equal accuracy regressed: %v", c.Worse())
	}
	c = Compare(base, plain, CompareOptions{})
	for _, m := range []string{"accuracy", "ttfo_ms.p50"} {
		if indexDelta(c.Deltas, m) >= 0 {
			t.Errorf("%s compared against a run that neither graded nor reasoned", m)
		}
	}
	// Pooled repeats keep the graded counts and TTFO of every run, the
	// one that never reasoned answering at its first token.
	pooled := MergeRuns([]*RunSamples{base, plain})
	if g := pooled.Overall.Graded; g != base.Overall.Graded {
		t.Errorf("pooled graded %d, want %d", g, base.Overall.Graded)
	}
	if n, want := len(pooled.Overall.TTFO), len(base.Overall.TTFO)+len(plain.Overall.TTFT); n != want {
		t.Errorf("pooled TTFO values %d, want %d", n, want)
	}
}

func deltaOf(t *testing.T, c *Comparison, metric string) Delta {
	t.Helper()
	i := indexDelta(c.Deltas, metric)
	if i < 0 {
		t.Fatalf("no delta %s", metric)
	}
	return c.Deltas[i]
}

// compareTimes compares cur with base under a 10% relative limit on
// limited and checks, in the case called name, that each metric of
// changes was judged by the quantile test to have that change, and that
// limited is a regression exactly when regression is set.
func compareTimes(t *testing.T, name string, base, cur *RunSamples, limited string, changes map[string]string, regression bool) *Comparison {
	t.Helper()
	c := Compare(base, cur, CompareOptions{Limits: []Limit{{Metric: limited, Relative: 0.10}}})
	for metric, change := range changes {
		d := deltaOf(t, c, metric)
		if d.Change != change || d.Test != TestQuantile {
			t.Errorf("%s: %s %s (%.0f → %.0f ms), want %s; %+v", name, metric, d.Change, d.Baseline, d.Current, change, d.Runs)
		}
	}
	if got := deltaOf(t, c, limited).Regression; got != regression {
		t.Errorf("%s: %s regression %v, want %v", name, limited, got, regression)
	}
	return c
}

// callUS draws a call's time: 100-150 ms, times slow.
func callUS(rng *rand.Rand, slow float64) int64 {
	return int64((100_000 + rng.Float64()*50_000) * slow)
}

func TestParseLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Limit
		wantErr bool
	}{
		// A percentage is relative to the baseline.
		{in: "e2e_ms.p99=10%", want: Limit{Metric: "e2e_ms.p99", Relative: 0.1}},
		// A plain number is absolute, in the figure's unit; spaces are trimmed.
		{in: " failure_rate = 0.01 ", want: Limit{Metric: "failure_rate", Absolute: true, Value: 0.01}},
		{in: "accuracy=0.02", want: Limit{Metric: "accuracy", Absolute: true, Value: 0.02}},
		{in: "classes.mcq.accuracy=0.05", want: Limit{Metric: "classes.mcq.accuracy", Absolute: true, Value: 0.05}},
		{in: "ttfo_ms.p90=10%", want: Limit{Metric: "ttfo_ms.p90", Relative: 0.1}},
		// A conversation's time to finish, overall or per class.
		{in: "classes.chat.session_ms.p90=10%", want: Limit{Metric: "classes.chat.session_ms.p90", Relative: 0.1}},
		// A graph task's time to finish, and one node's latency per class.
		{in: "task_ms.p90=10%", want: Limit{Metric: "task_ms.p90", Relative: 0.1}},
		{in: "classes.agent.nodes.answer.latency_ms.p50=20", want: Limit{Metric: "classes.agent.nodes.answer.latency_ms.p50", Absolute: true, Value: 20}},
		// The share of sessions, or of one class's tasks, that met the SLO.
		{in: "session_goodput=0.05", want: Limit{Metric: "session_goodput", Absolute: true, Value: 0.05}},
		{in: "classes.agent.task_goodput=0.05", want: Limit{Metric: "classes.agent.task_goodput", Absolute: true, Value: 0.05}},
		// error_rate is the threshold alias of failure_rate.
		{in: "error_rate=0", want: Limit{Metric: "failure_rate", Absolute: true}},
		// Per-class figures may be limited.
		{in: "classes.long-doc.ttft_ms.p95=5%", want: Limit{Metric: "classes.long-doc.ttft_ms.p95", Relative: 0.05}},
		// off removes a default.
		{in: "output_tokens_per_s=off", want: Limit{Metric: "output_tokens_per_s", Off: true}},
		// Throughput is compared overall only.
		{in: "classes.a.output_tokens_per_s=5%", wantErr: true},
		// p999 is not compared (too few samples to resample in most runs).
		{in: "ttft_ms.p999=5%", wantErr: true},
		// No value, negative, not a number, no key.
		{in: "ttft_ms.p99=", wantErr: true},
		{in: "ttft_ms.p99=-5%", wantErr: true},
		{in: "ttft_ms.p99=NaN", wantErr: true},
		{in: "=5%", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseLimit(tt.in)
		if tt.wantErr {
			if !errors.Is(err, ErrLimit) {
				t.Errorf("ParseLimit(%q) = %v, %v; want ErrLimit", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseLimit(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	t.Parallel()
	got := WithDefaults([]Limit{
		{Metric: "itl_ms.p99", Off: true},
		{Metric: "e2e_ms.p99", Relative: 0.2},
		{Metric: "failure_rate", Absolute: true, Value: 0.01},
	})
	var names []string
	for _, l := range got {
		names = append(names, l.String())
	}
	// off drops a default, a repeat replaces it in place, a new one is appended.
	want := []string{"ttft_ms.p99=10%", "e2e_ms.p99=20%", "output_tokens_per_s=10%", "failure_rate=0.01"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestQuantileTest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		base, cur []float64
		q, shift  float64
		p         float64
	}{
		// Medians of 4 and 4 fully separated: all 4 values above the pooled
		// median are current, P = 1/C(8,4) = 1/70, two-sided 2/70.
		{name: "separated", base: []float64{1, 2, 3, 4}, cur: []float64{5, 6, 7, 8}, q: 0.5, p: 2.0 / 70},
		// The same, shifted back by 4: the samples interleave exactly.
		{name: "shifted back", base: []float64{1, 2, 3, 4}, cur: []float64{5, 6, 7, 8}, q: 0.5, shift: 4, p: 1},
		// Identical samples: no evidence of any difference.
		{name: "identical", base: []float64{1, 2, 3}, cur: []float64{1, 2, 3}, q: 0.5, p: 1},
		// All tied: nothing lies above the pooled quantile.
		{name: "all tied", base: []float64{2, 2}, cur: []float64{2, 2, 2}, q: 0.9, p: 1},
		// An empty side cannot be tested.
		{name: "empty", base: nil, cur: []float64{1}, q: 0.5, p: 1},
	}
	for _, tt := range tests {
		if p := quantileTest(tt.base, tt.cur, tt.q, tt.shift); math.Abs(p-tt.p) > 1e-9 {
			t.Errorf("%s: p %.6f, want %.6f", tt.name, p, tt.p)
		}
	}
}

// TestQuantileTestErrorRates checks the test against the definition of
// its error rate on samples from known distributions: two samples of one
// lognormal are rejected at most 5% of the time at level 0.05, and the
// inverted interval of the P99 shift holds a planted shift at least 95%
// of the time.
func TestQuantileTestErrorRates(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(n int, add float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Exp(0.5*rng.NormFloat64()) + add
		}
		slices.Sort(v)
		return v
	}
	const trials, n, q = 400, 1500, 0.99
	rejected, covered := 0, 0
	for range trials {
		a, b := draw(n, 0), draw(n, 0)
		if quantileTest(a, b, q, 0) < 0.05 {
			rejected++
		}
		lo, hi := quantileInterval(a, draw(n, 0.5), q, 0.05)
		if lo <= 0.5 && 0.5 <= hi {
			covered++
		}
	}
	if rate := float64(rejected) / trials; rate > 0.05 {
		t.Errorf("A/A rejection rate %.3f, want at most 0.05", rate)
	}
	if cov := float64(covered) / trials; cov < 0.95 {
		t.Errorf("interval coverage of a planted shift %.3f, want at least 0.95", cov)
	}
}

func TestTwoProportions(t *testing.T) {
	t.Parallel()
	// 1% against 3% of 1000: Wald z = 0.02/√(0.01·0.99/1000 + 0.03·0.97/1000) = 3.2026.
	diff, lo, hi, p := twoProportions(10, 1000, 30, 1000, 0.95)
	if math.Abs(diff-0.02) > 1e-12 || math.Abs(p-0.001362) > 2e-5 || lo <= 0 || hi <= diff {
		t.Errorf("diff %.4f [%.4f, %.4f] p %.6f", diff, lo, hi, p)
	}
	// No requests on one side: nothing to test.
	if _, _, _, p := twoProportions(0, 0, 3, 10, 0.95); p != 1 {
		t.Errorf("empty side: p %v, want 1", p)
	}
}

func TestDiffEnv(t *testing.T) {
	t.Parallel()
	base := map[string]any{"target": map[string]any{"model": "m1", "stream": true}, "gpus": []any{"A100"}, "old": 1.0,
		"server_gpus": []any{map[string]any{"name": "A100", "index": 0.0}}}
	cur := map[string]any{"target": map[string]any{"model": "m2", "stream": true}, "gpus": []any{"A100"}, "new": "x",
		"server_gpus": []any{map[string]any{"name": "H100", "index": 0.0}}}
	// Changed, added and removed fields; lists of objects diff per element.
	want := []EnvChange{
		{Field: "new", Current: "x", Absent: "baseline"},
		{Field: "old", Baseline: "1", Absent: "current"},
		{Field: "server_gpus.0.name", Baseline: "A100", Current: "H100"},
		{Field: "target.model", Baseline: "m1", Current: "m2"},
	}
	if diff := cmp.Diff(want, DiffEnv(base, cur)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Two runs without env.json differ in nothing.
	if got := DiffEnv(nil, nil); len(got) != 0 {
		t.Errorf("nil envs: %v", got)
	}
}
