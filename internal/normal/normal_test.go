package normal

import (
	"math"
	"testing"
)

// TestQuantile: the table values every statistics text prints.
func TestQuantile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p, want float64
	}{
		{0.5, 0},          // the median is the mean
		{0.975, 1.95996},  // a two-sided 95% interval's bound
		{0.9, 1.28155},    // the p90 of a lognormal's log
		{0.025, -1.95996}, // symmetric about 0
	}
	for _, tt := range tests {
		if got := Quantile(tt.p); math.Abs(got-tt.want) > 1e-5 {
			t.Errorf("Quantile(%g) = %g, want %g", tt.p, got, tt.want)
		}
	}
}
