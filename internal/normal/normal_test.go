package normal

import (
	"math"
	"testing"
)

// TestQuantileInvertsTheCDF: Φ(Quantile(p)) = p across the range the
// callers use (1% to 99.9%), and the two-sided 95% bound is the textbook
// 1.96.
func TestQuantileInvertsTheCDF(t *testing.T) {
	t.Parallel()
	for _, p := range []float64{0.001, 0.01, 0.025, 0.5, 0.9, 0.975, 0.999} {
		z := Quantile(p)
		if cdf := (1 + math.Erf(z/math.Sqrt2)) / 2; math.Abs(cdf-p) > 1e-12 {
			t.Errorf("Φ(Quantile(%g)) = %g", p, cdf)
		}
	}
	if z := Quantile(0.975); math.Abs(z-1.959964) > 1e-6 {
		t.Errorf("Quantile(0.975) = %g, want 1.959964", z)
	}
}

// TestLognormalMuKeepsTheMean: the mean of exp(μ + σZ) is exp(μ + σ²/2),
// which must give the mean back; lognormal(512,256)'s median is 458
// (docs/plan.md).
func TestLognormalMuKeepsTheMean(t *testing.T) {
	t.Parallel()
	sigma := math.Sqrt(math.Log1p(256.0 * 256 / (512 * 512)))
	mu := LognormalMu(512, sigma)
	if mean := math.Exp(mu + sigma*sigma/2); math.Abs(mean-512) > 1e-9 {
		t.Errorf("mean %g, want 512", mean)
	}
	if median := math.Exp(mu); math.Round(median) != 458 {
		t.Errorf("median %g, want 458", median)
	}
}
