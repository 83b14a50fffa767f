package analyze

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/inferload/inferload/internal/randx"
)

// percentileRank is the 1-based nearest-rank position of quantile q in n
// sorted values: the smallest k with k/n >= q. Example: q 0.99, n 1000 →
// k 990.
func percentileRank(q float64, n int) int {
	k := int(math.Ceil(q * float64(n)))
	return min(max(k, 1), n)
}

// percentile is the nearest-rank quantile q of sorted values; 0 when empty.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[percentileRank(q, len(sorted))-1]
}

// bootstrapPercentile draws the quantile q of b bootstrap resamples of
// sorted, without building any resample.
//
// Subtleness ahead: a resample draws n indices ceil(n·U) with U uniform, a
// monotone map, so the resample's k-th smallest value is sorted[ceil(n·U₍k₎)-1]
// where U₍k₎ is the k-th smallest of n uniforms, which is Beta(k, n−k+1)
// distributed. One Beta draw per resample therefore gives exactly the
// resampled percentile, O(1) instead of O(n): a 10⁶-gap ITL sample costs
// the same as a 100-request one.
func bootstrapPercentile(rng *rand.Rand, sorted []float64, q float64, b int) []float64 {
	n := len(sorted)
	out := make([]float64, b)
	if n == 0 {
		return out
	}
	k := percentileRank(q, n)
	for i := range out {
		u := betaSample(rng, float64(k), float64(n-k+1))
		j := int(math.Ceil(u * float64(n)))
		out[i] = sorted[min(max(j, 1), n)-1]
	}
	return out
}

// bootstrapMean draws the mean of b bootstrap resamples of values.
func bootstrapMean(rng *rand.Rand, values []float64, b int) []float64 {
	out := make([]float64, b)
	n := len(values)
	if n == 0 {
		return out
	}
	for i := range out {
		sum := 0.0
		for range n {
			sum += values[rng.IntN(n)]
		}
		out[i] = sum / float64(n)
	}
	return out
}

// meanOf is the arithmetic mean; 0 when empty.
func meanOf(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	return sum / float64(len(values))
}

// interval is the central conf interval of draws (which it sorts), by the
// percentile method.
func interval(draws []float64, conf float64) (lo, hi float64) {
	if len(draws) == 0 {
		return 0, 0
	}
	slices.Sort(draws)
	tail := (1 - conf) / 2
	return percentile(draws, tail), percentile(draws, 1-tail)
}

// betaSample draws from Beta(a, b) for a, b >= 1 as X/(X+Y) with
// X ~ Gamma(a), Y ~ Gamma(b).
func betaSample(rng *rand.Rand, a, b float64) float64 {
	x := randx.Gamma(rng, a)
	y := randx.Gamma(rng, b)
	return x / (x + y)
}

// mannWhitney tests whether current tends to be larger or smaller than
// baseline (a shift of the whole distribution, not one percentile). It
// returns the two-sided p-value from the normal approximation with tie
// and continuity corrections, and the probability that a random current
// value exceeds a random baseline one (ties count half): 0.5 means no
// shift. Both inputs must be sorted. Empty inputs give p 1, probability 0.5.
func mannWhitney(baseline, current []float64) (p, probHigher float64) {
	n1, n2 := float64(len(baseline)), float64(len(current))
	if n1 == 0 || n2 == 0 {
		return 1, 0.5
	}
	rankSum, tieTerm := currentRankSum(baseline, current)
	u := rankSum - n2*(n2+1)/2
	probHigher = u / (n1 * n2)
	n := n1 + n2
	variance := n1 * n2 / 12 * ((n + 1) - tieTerm/(n*(n-1)))
	if variance <= 0 {
		return 1, probHigher
	}
	z := (math.Abs(u-n1*n2/2) - 0.5) / math.Sqrt(variance)
	if z < 0 {
		z = 0
	}
	return math.Erfc(z / math.Sqrt2), probHigher
}

// currentRankSum merges two sorted samples and returns the sum of the
// current sample's ranks (ties get their average rank) and Σ(t³−t) over
// tie groups, for the variance's tie correction.
func currentRankSum(baseline, current []float64) (rankSum, tieTerm float64) {
	i, j, rank := 0, 0, 0
	for i < len(baseline) || j < len(current) {
		v := nextValue(baseline, current, i, j)
		nb, nc := 0, 0
		for i < len(baseline) && baseline[i] == v {
			i++
			nb++
		}
		for j < len(current) && current[j] == v {
			j++
			nc++
		}
		t := float64(nb + nc)
		avg := float64(rank) + (t+1)/2
		rankSum += avg * float64(nc)
		tieTerm += t*t*t - t
		rank += nb + nc
	}
	return rankSum, tieTerm
}

// nextValue is the smaller of the two samples' next values.
func nextValue(a, b []float64, i, j int) float64 {
	switch {
	case i >= len(a):
		return b[j]
	case j >= len(b):
		return a[i]
	default:
		return min(a[i], b[j])
	}
}

// twoProportions compares failure counts: the difference of rates
// (current − baseline), its Wald interval at conf, and the two-sided
// p-value of the pooled z test. Counts of zero give p 1.
func twoProportions(failB, totalB, failC, totalC int64, conf float64) (diff, lo, hi, p float64) {
	if totalB == 0 || totalC == 0 {
		return 0, 0, 0, 1
	}
	pb := float64(failB) / float64(totalB)
	pc := float64(failC) / float64(totalC)
	diff = pc - pb
	z := normalQuantile(1 - (1-conf)/2)
	se := math.Sqrt(pb*(1-pb)/float64(totalB) + pc*(1-pc)/float64(totalC))
	lo, hi = diff-z*se, diff+z*se
	pool := float64(failB+failC) / float64(totalB+totalC)
	pooledSE := math.Sqrt(pool * (1 - pool) * (1/float64(totalB) + 1/float64(totalC)))
	if pooledSE == 0 {
		return diff, lo, hi, 1
	}
	return diff, lo, hi, math.Erfc(math.Abs(diff) / pooledSE / math.Sqrt2)
}

// normalQuantile is the standard normal quantile of p in (0, 1).
func normalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}
