package analyze

// This file: how many samples a percentile needs (the binomial rule);
// validity.go judges a step with it and knee.go finds a sweep's knee.

import (
	"fmt"
	"math"

	"github.com/inferload/inferload/record"
)

// MinSamples is the fewest samples that can back a claim about the
// q-quantile at the given confidence: n such that 1 − qⁿ ≥ confidence.
//
// Why: the largest of n samples lies above the true q-quantile with
// probability 1 − qⁿ (every sample falls below it with probability q). With
// fewer samples even the maximum is not a c-confidence upper bound, so no
// order statistic can stand for the percentile. At 95% confidence:
//
//	p50 → 5, p90 → 29, p95 → 59, p99 → 299, p99.9 → 2995
//
// so a P99 is never claimed from 200 samples. This is the zero-failure
// case of the binomial rule MLPerf LoadGen's early stopping uses
// (SLOHolds is the general case).
func MinSamples(q, confidence float64) int {
	if !(q > 0 && q < 1) || !(confidence > 0 && confidence < 1) {
		return math.MaxInt
	}
	n := math.Log(1-confidence) / math.Log(q)
	// Round 298.0000000001 down, not up: the bound is exact at integers.
	return int(math.Ceil(n - 1e-9))
}

// UpperBoundRank is the smallest k such that the k-th smallest of n
// samples is at or above the true q-quantile with the given confidence:
// P(Binomial(n, q) ≤ k−1) ≥ confidence. ok is false when even the largest
// sample is not enough (n < MinSamples).
func UpperBoundRank(n int, q, confidence float64) (k int, ok bool) {
	if n <= 0 || !(q > 0 && q < 1) || !(confidence > 0 && confidence < 1) {
		return 0, false
	}
	cdf := 0.0
	for j := 0; j < n; j++ {
		cdf += binomPMF(n, j, q)
		if cdf >= confidence {
			return j + 1, true
		}
	}
	return 0, false
}

// SLOHolds reports whether "the q-quantile is at most the bound" holds at
// the given confidence when exceed of n samples were above the bound: the
// upper-bound order statistic must itself be within the bound, i.e. at most
// n − UpperBoundRank samples may exceed it.
//
// Example: P99 at 95% confidence needs 299 samples with none above the
// bound; 1 000 samples allow 4 (P(Binomial(1000, 0.99) ≤ 995) ≈ 0.97).
func SLOHolds(n, exceed int, q, confidence float64) bool {
	k, ok := UpperBoundRank(n, q, confidence)
	return ok && exceed <= n-k
}

// binomPMF is P(Binomial(n, p) = k), computed in logs so it neither
// overflows nor underflows for large n.
func binomPMF(n, k int, p float64) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	logC := lg(n) - lg(k) - lg(n-k)
	return math.Exp(logC + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
}

// Backed is the name of the highest reported percentile that n samples back
// at the given confidence, or "none".
func Backed(n int64, confidence float64) string {
	best := "none"
	for _, p := range record.Percentiles {
		if n >= int64(MinSamples(p.Q, confidence)) {
			best = p.Name
		}
	}
	return best
}

// percentileQ returns the quantile of a reported percentile's name.
func percentileQ(name string) (float64, error) {
	if q, ok := record.PercentileQ(name); ok {
		return q, nil
	}
	return 0, fmt.Errorf("unknown percentile %q (want p50, p90, p95, p99 or p999)", name)
}
