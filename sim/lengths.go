package sim

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/inferload/inferload/internal/normal"
)

// LengthDist is a distribution of token counts: how long an answer runs
// when the model is free to stop (no ignore_eos).
type LengthDist struct {
	// Kind is "lognormal" (the default: chat answers are right-skewed),
	// "exponential", "uniform" or "fixed".
	Kind string `yaml:"kind"`
	// Mean is the mean length in tokens (the value itself for "fixed").
	Mean int `yaml:"mean"`
	// Sigma is the lognormal shape (the standard deviation of the log).
	Sigma float64 `yaml:"sigma"`
	// Min clamps every draw from below (0 means 1); it is the lower end
	// of the "uniform" range.
	Min int `yaml:"min"`
	// Max clamps every draw from above (0 means no clamp); it is the
	// upper end of the "uniform" range.
	Max int `yaml:"max"`
}

// Validate reports a distribution that cannot be sampled.
func (d LengthDist) Validate() error {
	switch d.Kind {
	case "", "lognormal", "exponential", "fixed":
		if d.Mean <= 0 {
			return fmt.Errorf("mean must be > 0, got %d", d.Mean)
		}
	case "uniform":
		if d.Max <= 0 {
			return fmt.Errorf("uniform needs max > 0, got %d", d.Max)
		}
	default:
		return fmt.Errorf("kind %q is not one of lognormal, exponential, uniform, fixed", d.Kind)
	}
	if d.Sigma < 0 {
		return fmt.Errorf("sigma must be >= 0, got %g", d.Sigma)
	}
	if d.Max > 0 && d.Max < d.Min {
		return fmt.Errorf("max %d is below min %d", d.Max, d.Min)
	}
	return nil
}

// Sample draws one length from r, clamped to [Min, Max] and at least 1.
func (d LengthDist) Sample(r *rand.Rand) int {
	lo := max(d.Min, 1)
	var v float64
	switch d.Kind {
	case "fixed":
		v = float64(d.Mean)
	case "uniform":
		return lo + r.IntN(max(d.Max-lo+1, 1))
	case "exponential":
		v = r.ExpFloat64() * float64(d.Mean)
	default: // lognormal, parameterised by its mean, as workload's is
		v = math.Exp(normal.LognormalMu(float64(d.Mean), d.Sigma) + d.Sigma*r.NormFloat64())
	}
	n := max(int(math.Round(v)), lo)
	if d.Max > 0 {
		n = min(n, d.Max)
	}
	return n
}
