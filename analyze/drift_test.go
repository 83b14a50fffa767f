package analyze

import (
	"math"
	"strings"
	"testing"
	"time"
)

// noisy is level(i) plus deterministic noise of ±amp, so tests are
// repeatable.
func noisy(n int, amp float64, level func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = level(i) + amp*math.Sin(float64(i)*2.39996) // golden-angle steps: no period to fake a trend
	}
	return out
}

func TestMannKendall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		xs    []float64
		s     int
		slope float64
		pLow  bool // p < 0.05
	}{
		// Strictly rising, 10 windows: S = 45 (every pair), slope 1, p tiny.
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 45, 1, true},
		// Constant: every pair tied, S = 0, no trend.
		{[]float64{5, 5, 5, 5, 5, 5}, 0, 0, false},
		// Four rising windows cannot be significant (why MinTrendWindows is 5).
		{[]float64{1, 2, 3, 4}, 6, 1, false},
		// Falling: negative S.
		{[]float64{9, 7, 8, 5, 4, 3, 1}, -19, -1.25, true},
	}
	for _, tt := range tests {
		got := MannKendall(tt.xs)
		if got.S != tt.s || math.Abs(got.Slope-tt.slope) > 1e-9 || (got.P < 0.05) != tt.pLow {
			t.Errorf("%v: S %d slope %v p %v; want S %d slope %v p<0.05 %v", tt.xs, got.S, got.Slope, got.P, tt.s, tt.slope, tt.pLow)
		}
	}
}

func TestDrift(t *testing.T) {
	t.Parallel()
	sixHours := 6 * time.Hour
	tests := []struct {
		name    string
		windows []float64
		opts    DriftOptions
		drifted bool
		verdict string
	}{
		// A planted slow degradation: P99 from 200 ms rising 38% over 72 windows, under ±10 ms noise.
		{"planted degradation", noisy(72, 10, func(i int) float64 { return 200 * (1 + 0.38*float64(i)/71) }), DriftOptions{}, true, "rose 38% over 6h0m0s (95% CI +35% to +42%), significant"},
		// Flat with the same noise: no significant trend.
		{"flat", noisy(72, 10, func(int) float64 { return 200 }), DriftOptions{}, false, "no significant trend over 6h0m0s: change +0% (95% CI -2% to +2%"},
		// A change that rounds to 0 from below reads +0%, not -0%.
		{"slightly falling", noisy(72, 0, func(i int) float64 { return 200 - 0.001*float64(i) }), DriftOptions{}, false, "fell 0% over 6h0m0s (95% CI +0% to +0%)"},
		// Three tests share α: each runs at 0.05/3 and draws a 98.3% interval.
		{"a family of three", noisy(72, 10, func(int) float64 { return 200 }), DriftOptions{Tests: 3}, false, "98.3% CI"},
		// Five windows rising perfectly (p = 0.027) are drifted at 0.05 ...
		{"five rising windows", []float64{1, 2, 3, 4, 5}, DriftOptions{}, true, "α = 0.05, 5 windows"},
		// ... but not at 0.05/3: too few windows to pass a third of α.
		{"five rising windows, three tests", []float64{1, 2, 3, 4, 5}, DriftOptions{Tests: 3}, false, "no significant trend"},
		// A window with no successes has no logarithm: the change is
		// linear, relative to the fitted start, and cannot fall past -100%.
		{"throughput to zero", noisy(20, 0, func(i int) float64 { return float64(19 - i) }), DriftOptions{}, true, "fell 100% over 6h0m0s (95% CI -100% to -100%)"},
		// A tiny but steady trend is significant yet under the 10% that counts.
		{"tiny trend", noisy(72, 0.5, func(i int) float64 { return 200 + 0.1*float64(i) }), DriftOptions{}, false, "under the 10%"},
		// Throughput falling is drift too.
		{"falling", noisy(20, 1, func(i int) float64 { return 100 - 2*float64(i) }), DriftOptions{}, true, "fell"},
		// A failure rate rising from 0 to 0.05: relative change is undefined, absolute counts.
		{"failure rate from zero", noisy(30, 0, func(i int) float64 { return 0.05 * float64(i) / 29 }), DriftOptions{Absolute: true, MinChange: 0.01}, true, "rose by 0.05"},
		// Too few windows: no claim either way.
		{"too few", []float64{1, 2, 3, 4}, DriftOptions{}, false, "too few to test"},
	}
	for _, tt := range tests {
		v := Drift("P99 TTFT", tt.windows, sixHours, tt.opts)
		if v.Drifted != tt.drifted || !strings.Contains(v.Verdict, tt.verdict) {
			t.Errorf("%s: drifted %v verdict %q; want %v with %q", tt.name, v.Drifted, v.Verdict, tt.drifted, tt.verdict)
		}
	}
}

// TestSlopeInterval: the rank rule that inverts Mann-Kendall, on series
// whose pairwise slopes are known. For x = i², the slope between windows
// i and j is i + j.
func TestSlopeInterval(t *testing.T) {
	t.Parallel()
	squares := func(n int) []float64 {
		return noisy(n, 0, func(i int) float64 { return float64(i * i) })
	}
	tests := []struct {
		name   string
		xs     []float64
		level  float64
		lo, hi float64
	}{
		// Every slope is 1: the interval is the point.
		{"a straight line", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.95, 1, 1},
		// 10 windows, 45 slopes, Var(S) = 125: ranks 11 and 35 of the sorted i + j.
		{"10 squares at 95%", squares(10), 0.95, 6, 12},
		// 5 windows: even 95% reaches the smallest (0 + 1) and largest (3 + 4) slope.
		{"5 squares at 95%", squares(5), 0.95, 1, 7},
		// A lower level narrows the interval around Sen's slope (9).
		{"10 squares at 50%", squares(10), 0.50, 8, 10},
	}
	for _, tt := range tests {
		lo, hi := MannKendall(tt.xs).SlopeInterval(tt.level)
		if lo != tt.lo || hi != tt.hi {
			t.Errorf("%s: [%v, %v], want [%v, %v]", tt.name, lo, hi, tt.lo, tt.hi)
		}
	}
}

// TestQuantileDrift: the quantiles with enough backed windows share α;
// one with too few is not tested and says how long a soak at the same
// rate would test it.
func TestQuantileDrift(t *testing.T) {
	t.Parallel()
	rising := func(n int) QuantileWindows {
		q := QuantileWindows{MinN: 130}
		for i := range n {
			q.Times, q.Values = append(q.Times, 7.5+15*float64(i)), append(q.Values, 264*(1+float64(i)/5))
		}
		return q
	}
	p50, p90, p99 := rising(6), rising(6), rising(2)
	p50.DriftQuantile, p90.DriftQuantile, p99.DriftQuantile = DriftQuantiles[0], DriftQuantiles[1], DriftQuantiles[2]
	p50.Samples, p90.Samples, p99.Samples = 780, 780, 780
	empty := QuantileWindows{DriftQuantile: DriftQuantiles[2]}
	tests := []struct {
		name string
		qs   []QuantileWindows
		want []string // each verdict holds its line
	}{
		// Issue 32's soak: 780 TTFTs over 90 s in 15 s windows (130 each).
		// P50 and P90 are tested at 0.05/2; P99 needs 299 a window, so
		// windows of 3 × 15 s, and 5 of them: 3m45s.
		{"P99 too short", []QuantileWindows{p50, p90, p99}, []string{
			"P50 TTFT rose", "α = 0.05/2, 6 windows",
			"P90 TTFT rose",
			"P99 TTFT drift not tested: 780 values over 1m30s fill 2 windows of at least 299 (P99 needs 299 a window at 95% confidence, " +
				"a trend 5 windows); at this rate a soak of at least 3m45s would test it"}},
		// Alone, P50 has all of α.
		{"one tested", []QuantileWindows{p50}, []string{"α = 0.05, 6 windows"}},
		// No values at all: no rate to size a longer soak by.
		{"no values", []QuantileWindows{empty}, []string{"P99 TTFT drift not tested: 0 values over 1m30s fill 0 windows of at least 299 (P99 needs 299 a window at 95% confidence, a trend 5 windows)"}},
	}
	for _, tt := range tests {
		vs := QuantileDrift("TTFT", tt.qs, 90*time.Second, 15*time.Second, DriftOptions{})
		var all []string
		for _, v := range vs {
			all = append(all, v.Verdict)
			if v.Tested == strings.Contains(v.Verdict, "not tested") {
				t.Errorf("%s: tested %v beside %q", tt.name, v.Tested, v.Verdict)
			}
		}
		text := strings.Join(all, "\n")
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: verdicts lack %q:\n%s", tt.name, w, text)
			}
		}
	}
}
