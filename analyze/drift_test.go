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
		{"planted degradation", noisy(72, 10, func(i int) float64 { return 200 * (1 + 0.38*float64(i)/71) }), DriftOptions{}, true, "rose 38% over 6h0m0s, significant"},
		// Flat with the same noise: no significant trend.
		{"flat", noisy(72, 10, func(int) float64 { return 200 }), DriftOptions{}, false, "no significant trend"},
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
