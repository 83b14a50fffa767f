package analyze

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/inferload/inferload/internal/normal"
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

// bootstrapP is the two-sided p-value that goes with the percentile
// interval of the same draws: twice the share on the smaller side of 0,
// so the level-c interval excludes 0 exactly when p < 1 − c.
func bootstrapP(draws []float64) float64 {
	if len(draws) == 0 {
		return 1
	}
	below, above := 0, 0
	for _, d := range draws {
		if d <= 0 {
			below++
		}
		if d >= 0 {
			above++
		}
	}
	return min(1, 2*float64(min(below, above))/float64(len(draws)))
}

// twoProportions compares failure counts: the difference of rates
// (current − baseline), its Wald interval at conf, and the two-sided
// p-value of the same Wald z (unpooled standard error), so the interval
// excludes 0 exactly when p < 1 − conf. Equal rates of 0 or 1 give p 1.
func twoProportions(failB, totalB, failC, totalC int64, conf float64) (diff, lo, hi, p float64) {
	if totalB == 0 || totalC == 0 {
		return 0, 0, 0, 1
	}
	pb := float64(failB) / float64(totalB)
	pc := float64(failC) / float64(totalC)
	diff = pc - pb
	z := normal.Quantile(1 - (1-conf)/2)
	se := math.Sqrt(pb*(1-pb)/float64(totalB) + pc*(1-pc)/float64(totalC))
	lo, hi = diff-z*se, diff+z*se
	if se == 0 {
		return diff, lo, hi, 1
	}
	return diff, lo, hi, math.Erfc(math.Abs(diff) / se / math.Sqrt2)
}
