// Package normal is the standard normal distribution's quantile function,
// the one both the length shapes (workload) and the significance tests
// (analyze) use: a leaf with no module dependency.
package normal

import "math"

// Quantile is the standard normal quantile of p in (0, 1): the z with
// P(Z ≤ z) = p (Quantile(0.975) ≈ 1.96). It is ±Inf at 0 and 1 and NaN
// outside [0, 1].
func Quantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}
