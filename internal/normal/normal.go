// Package normal holds the normal distribution's rules that several
// packages draw or test by: its quantile function (workload's length
// shapes, analyze's significance tests) and the lognormal's location for
// a given mean (workload's lognormal lengths, the simulator's answer
// lengths). A leaf with no module dependency, so sim may use it too.
package normal

import "math"

// Quantile is the standard normal quantile of p in (0, 1): the z with
// P(Z ≤ z) = p (Quantile(0.975) ≈ 1.96). It is ±Inf at 0 and 1 and NaN
// outside [0, 1].
func Quantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// LognormalMu is the μ of the lognormal whose mean is mean and whose log
// has standard deviation sigma: a lognormal's mean is exp(μ + σ²/2), so
// μ = ln(mean) − σ²/2, and the median exp(μ) sits below the mean.
func LognormalMu(mean, sigma float64) float64 {
	return math.Log(mean) - sigma*sigma/2
}
