package analyze

import (
	"math"
	"testing"
)

func TestMinSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q, c float64
		want int
	}{
		// The median needs 5: 1 − 0.5⁵ = 0.969 ≥ 0.95, 1 − 0.5⁴ = 0.94 is not.
		{0.5, 0.95, 5},
		// P90 at 95%: ln 0.05 / ln 0.9 = 28.4 → 29.
		{0.9, 0.95, 29},
		// P99 at 95%: 298.1 → 299, so 200 samples never back a P99.
		{0.99, 0.95, 299},
		// P99.9 at 95%: 2995.
		{0.999, 0.95, 2995},
		// P99 at 99% confidence needs more: 459.
		{0.99, 0.99, 459},
		// Nonsense input backs nothing rather than panicking.
		{1, 0.95, math.MaxInt},
		{0.99, 0, math.MaxInt},
		{math.NaN(), 0.95, math.MaxInt},
	}
	for _, tt := range tests {
		if got := MinSamples(tt.q, tt.c); got != tt.want {
			t.Errorf("MinSamples(%v, %v) = %d, want %d", tt.q, tt.c, got, tt.want)
		}
	}
}

func TestUpperBoundRankAndSLOHolds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n, exceed int
		q, c      float64
		wantK     int
		wantOK    bool
		holds     bool
	}{
		// Exactly MinSamples: only the maximum is a bound; no sample may exceed.
		{299, 0, 0.99, 0.95, 299, true, true},
		{299, 1, 0.99, 0.95, 299, true, false},
		// One short of MinSamples: no bound at all, the SLO cannot be claimed.
		{298, 0, 0.99, 0.95, 0, false, false},
		// 200 samples never back a P99, even with no sample above the bound.
		{200, 0, 0.99, 0.95, 0, false, false},
		// 1000 samples: the 996th is the bound, so 4 may exceed and 5 may not.
		{1000, 4, 0.99, 0.95, 996, true, true},
		{1000, 5, 0.99, 0.95, 996, true, false},
		// The median from 100 samples: the 59th order statistic (normal
		// approximation 50 + 1.645·5 = 58.2).
		{100, 41, 0.5, 0.95, 59, true, true},
	}
	for _, tt := range tests {
		k, ok := UpperBoundRank(tt.n, tt.q, tt.c)
		if k != tt.wantK || ok != tt.wantOK {
			t.Errorf("UpperBoundRank(%d, %v, %v) = %d, %v; want %d, %v", tt.n, tt.q, tt.c, k, ok, tt.wantK, tt.wantOK)
		}
		if got := SLOHolds(tt.n, tt.exceed, tt.q, tt.c); got != tt.holds {
			t.Errorf("SLOHolds(%d, %d, %v, %v) = %v, want %v", tt.n, tt.exceed, tt.q, tt.c, got, tt.holds)
		}
	}
}

func TestBacked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int64
		want string
	}{
		{0, "none"},    // nothing measured backs nothing
		{4, "none"},    // one short of the median's 5
		{5, "p50"},     // the median alone
		{200, "p95"},   // 200 samples: P95 yes (59), P99 no (299)
		{299, "p99"},   // exactly enough for P99
		{5000, "p999"}, // enough for every reported percentile
	}
	for _, tt := range tests {
		if got := Backed(tt.n, 0.95); got != tt.want {
			t.Errorf("Backed(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
