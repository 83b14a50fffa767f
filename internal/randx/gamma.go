// Package randx holds the random variates more than one package draws.
package randx

import (
	"math"
	"math/rand/v2"
)

// Gamma draws from gamma(shape, 1) by Marsaglia and Tsang's method
// ("A simple method for generating gamma variables", 2000). For shape < 1
// it uses their boost: if X ~ gamma(shape+1) and U ~ uniform(0,1), then
// X·U^(1/shape) ~ gamma(shape).
func Gamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return Gamma(rng, shape+1) * math.Pow(rng.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		// The cheap squeeze test accepts most draws without a logarithm.
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
