package analyze

// This file: the test a comparison judges a latency percentile by, and
// the interval it inverts from that same test, so a delta's p, interval
// and verdict cannot disagree (docs/compare.md, "The statistics").

import (
	"math"
	"sort"
)

// quantileTest is Mood's two-sample quantile test made exact: pool the
// two sorted samples, take the pooled nearest-rank q-quantile t, and count
// how many of each sample lie above t. If both runs come from one
// distribution, every split of the pooled values between the runs is
// equally likely, so the current run's count above t is hypergeometric
// given the pooled count; the two-sided p-value is twice the smaller tail.
// It reads only which values lie above one threshold, so it is valid for a
// P99 at any sample size (no density estimate, no bootstrap of a tail
// that 1% of the values decide), and at small sizes it simply cannot
// reject.
//
// shift is subtracted from every current value first: the test of "current
// is baseline shifted by shift at its q-quantile", which quantileInterval
// inverts.
func quantileTest(base, cur []float64, q, shift float64) float64 {
	nb, nc := len(base), len(cur)
	if nb == 0 || nc == 0 {
		return 1
	}
	t := kthOfTwo(base, cur, shift, percentileRank(q, nb+nc))
	aboveB := nb - sort.Search(nb, func(i int) bool { return base[i] > t })
	aboveC := nc - sort.Search(nc, func(i int) bool { return cur[i]-shift > t })
	return hypergeomTwoSided(nb+nc, aboveB+aboveC, nc, aboveC)
}

// kthOfTwo is the k-th smallest (1-based) of a ∪ (b − shift), both
// sorted, in O(log n): take i values from a and k−i from b, the largest i
// whose a-part still lies below b's next value.
func kthOfTwo(a, b []float64, shift float64, k int) float64 {
	lo, hi := max(0, k-len(b)), min(k, len(a))
	for lo < hi {
		i := (lo + hi) / 2
		if a[i] < b[k-i-1]-shift {
			lo = i + 1
		} else {
			hi = i
		}
	}
	i, j := lo, k-lo
	v := math.Inf(-1)
	if i > 0 {
		v = a[i-1]
	}
	if j > 0 {
		v = max(v, b[j-1]-shift)
	}
	return v
}

// hypergeomTwoSided is 2·min(P(X ≤ x), P(X ≥ x)), capped at 1, for X the
// number of marked items among draws taken from total items of which
// marked are marked.
func hypergeomTwoSided(total, marked, draws, x int) float64 {
	lo, hi := max(0, marked+draws-total), min(marked, draws)
	if lo == hi {
		return 1
	}
	mean := float64(draws) * float64(marked) / float64(total)
	logP := logHypergeom(total, marked, draws, x)
	// Sum the tail on the far side of the mean: its terms shrink
	// monotonically, so the sum stops once they no longer count.
	tail, term := 0.0, math.Exp(logP)
	if float64(x) <= mean {
		for k := x; k >= lo && term > 0; k-- {
			tail += term
			if term < tail*1e-17 {
				break
			}
			// P(k−1)/P(k) = k(total−marked−draws+k) / ((marked−k+1)(draws−k+1))
			term *= float64(k) * float64(total-marked-draws+k) / (float64(marked-k+1) * float64(draws-k+1))
		}
	} else {
		for k := x; k <= hi && term > 0; k++ {
			tail += term
			if term < tail*1e-17 {
				break
			}
			// P(k+1)/P(k) = (marked−k)(draws−k) / ((k+1)(total−marked−draws+k+1))
			term *= float64(marked-k) * float64(draws-k) / (float64(k+1) * float64(total-marked-draws+k+1))
		}
	}
	return min(1, 2*tail)
}

// logHypergeom is log P(X = x) for the hypergeometric distribution.
func logHypergeom(total, marked, draws, x int) float64 {
	return logChoose(marked, x) + logChoose(total-marked, draws-x) - logChoose(total, draws)
}

func logChoose(n, k int) float64 {
	lg := func(v int) float64 { r, _ := math.Lgamma(float64(v) + 1); return r }
	return lg(n) - lg(k) - lg(n-k)
}

// quantileInterval is the set of shifts the test does not reject at level
// alpha, found by bisection on either side of the point estimate: the
// confidence interval of current − baseline at the q-quantile that agrees
// with quantileTest by construction. Shifts are searched within the pooled
// range of values (no shift beyond it can be told from one at its edge).
func quantileInterval(base, cur []float64, q, alpha float64) (lo, hi float64) {
	est := percentile(cur, q) - percentile(base, q)
	span := max(cur[len(cur)-1], base[len(base)-1]) - min(cur[0], base[0])
	accept := func(shift float64) bool { return quantileTest(base, cur, q, shift) >= alpha }
	edge := func(in, out float64) float64 {
		if accept(out) {
			return out
		}
		for range 60 {
			mid := (in + out) / 2
			if accept(mid) {
				in = mid
			} else {
				out = mid
			}
			if math.Abs(out-in) <= 1e-9*max(1, math.Abs(in)) {
				break
			}
		}
		return in
	}
	if !accept(est) {
		// A discrete test can reject at the point estimate itself when a
		// run has few values; the interval is then the estimate alone.
		return est, est
	}
	lo, hi = edge(est, est-span), edge(est, est+span)
	// The test's statistic is a step function of the shift, so its
	// acceptance set can have a hole; keep the part around the estimate,
	// which excludes 0 whenever the test rejects 0.
	if lo <= 0 && 0 <= hi && !accept(0) {
		if est > 0 {
			lo = edge(est, 0)
		} else {
			hi = edge(est, 0)
		}
	}
	return lo, hi
}
