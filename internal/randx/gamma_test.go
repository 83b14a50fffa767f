package randx

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Gamma(k, 1) has mean k and variance k, for shapes below and above 1.
func TestGammaMoments(t *testing.T) {
	t.Parallel()
	for _, k := range []float64{0.25, 1, 4} {
		rng := rand.New(rand.NewPCG(7, uint64(k*100)))
		const n = 200000
		var sum, sq float64
		for range n {
			x := Gamma(rng, k)
			sum += x
			sq += x * x
		}
		mean := sum / n
		variance := sq/n - mean*mean
		if math.Abs(mean-k)/k > 0.02 || math.Abs(variance-k)/k > 0.05 {
			t.Errorf("shape %v: mean %.4f variance %.4f, want %v for both", k, mean, variance, k)
		}
	}
}
