package record

import (
	"math"
	"slices"
	"testing"
)

// TestHistStats checks the figures of known value sets, in milliseconds.
func TestHistStats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		values  []int64 // microseconds
		want    Stats
		clamped int64
	}{
		// Nothing recorded: all zero.
		{"empty", nil, Stats{}, 0},
		// One value: every percentile is that value, exactly, although its HDR bucket is wider.
		{"single", []int64{123_457}, Stats{Count: 1, Mean: 123.457, Min: 123.457, P50: 123.457, P90: 123.457, P95: 123.457, P99: 123.457, P999: 123.457, Max: 123.457}, 0},
		// 1..1000 µs (exact range): P50 is the 500th value, P99.9 the 999th; population stddev of 1..n is sqrt((n²−1)/12).
		{"uniform 1..1000", seq(1, 1000), Stats{Count: 1000, Mean: 0.5005, Stddev: roundNS(math.Sqrt((1000*1000-1)/12.0) / 1e3), Min: 0.001, P50: 0.5, P90: 0.9, P95: 0.95, P99: 0.99, P999: 0.999, Max: 1}, 0},
		// Out-of-range values are clamped to 0 and 1 h and counted, never dropped.
		{"clamped", []int64{-5, 7200e6}, Stats{Count: 2, Mean: 1800e3, Stddev: 1800e3, Min: 0, P50: 0, P90: 3600e3, P95: 3600e3, P99: 3600e3, P999: 3600e3, Max: 3600e3}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := NewHist()
			for _, v := range tt.values {
				h.Record(v)
			}
			if got := h.Stats(); got != tt.want {
				t.Errorf("Stats = %+v\nwant    %+v", got, tt.want)
			}
			if h.Clamped() != tt.clamped {
				t.Errorf("Clamped = %d, want %d", h.Clamped(), tt.clamped)
			}
		})
	}
}

func seq(from, to int64) []int64 {
	var out []int64
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

// TestHistMerge: merging halves gives exactly the stats of recording all
// values into one histogram (percentiles recomputed, never averaged).
func TestHistMerge(t *testing.T) {
	t.Parallel()
	all, a, b := NewHist(), NewHist(), NewHist()
	for i, v := range randomLatencies(5000) {
		all.Record(v)
		if i%3 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	b.Record(-1) // a clamped value travels with the merge
	all.Record(-1)
	a.Merge(b)
	a.Merge(NewHist()) // merging an empty histogram changes nothing
	if a.Stats() != all.Stats() || a.Clamped() != 1 {
		t.Errorf("merged %+v (clamped %d)\nwant   %+v", a.Stats(), a.Clamped(), all.Stats())
	}
	a.Reset()
	if a.Stats() != (Stats{}) || a.Clamped() != 0 {
		t.Errorf("after Reset: %+v", a.Stats())
	}
}

// TestHistPercentileAccuracy: on a wide spread of values, each percentile is
// within 0.1% of the exact order statistic.
func TestHistPercentileAccuracy(t *testing.T) {
	t.Parallel()
	vals := randomLatencies(20_000)
	h := NewHist()
	for _, v := range vals {
		h.Record(v)
	}
	sorted := append([]int64(nil), vals...)
	slices.Sort(sorted)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		exact := float64(sorted[int(math.Ceil(q*float64(len(sorted))))-1])
		if got := float64(h.QuantileUS(q)); math.Abs(got-exact) > exact*1e-3 {
			t.Errorf("q%.3f = %.0f µs, exact %.0f µs", q, got, exact)
		}
	}
}

func randomLatencies(n int) []int64 {
	out := make([]int64, n)
	x := uint64(88172645463325252)
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out[i] = int64(100 + x%5_000_000) // 0.1 ms to 5 s
	}
	return out
}
