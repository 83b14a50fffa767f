package schedule

import (
	"math"
	"time"
)

// RampArrivals is an open-loop schedule whose rate moves linearly from r0
// to r1 over d, with evenly spaced arrivals. Rather than stepping the rate,
// the k-th arrival is placed where the integral of the rate reaches k
// (vegeta's linear pacer does the same):
//
//	N(t) = r0·t + (r1−r0)·t²/(2d)  →  t_k solves N(t) = k
//
// Example: 0 → 10 requests/s over 10 s has an area of 50 and sends 49
// requests (the 50th falls at exactly 10 s, which ends the phase), the
// first at √2 s ≈ 1.41 s (N = t²/2 = 1), the tenth at √20 s ≈ 4.47 s.
type RampArrivals struct {
	r0, r1 float64
	d      time.Duration
	k      float64
}

// NewRampArrivals is the ramp from r0 to r1 requests/s over d.
func NewRampArrivals(r0, r1 float64, d time.Duration) *RampArrivals {
	return &RampArrivals{r0: r0, r1: r1, d: d}
}

// Next returns the next arrival's offset; after d it returns d, which ends
// the phase (the engine stops at its duration).
func (a *RampArrivals) Next() time.Duration {
	a.k++
	sec := a.d.Seconds()
	t := RampTime(a.r0, a.r1, sec, a.k)
	if math.IsNaN(t) || t >= sec {
		return a.d
	}
	return time.Duration(t * float64(time.Second))
}

// RampTime is the one rule for where a linear ramp puts an arrival: the
// instant t, in seconds from the ramp's start, at which the integral of a
// rate moving from r0 to r1 requests/s over d seconds reaches area:
//
//	N(t) = r0·t + (r1−r0)·t²/(2d) = area
//
// (a flat ramp is area/r0). It is NaN when a falling ramp never reaches
// the area; a t beyond d is past the ramp's end, where the caller's rate
// takes over. RampArrivals spaces arrivals by it, and capacity's cold
// start maps a Poisson or gamma process through it.
func RampTime(r0, r1, d, area float64) float64 {
	slope := (r1 - r0) / d
	if math.Abs(slope) < 1e-12 {
		return area / r0
	}
	return (-r0 + math.Sqrt(r0*r0+2*slope*area)) / slope
}

// RampUsers is a closed loop's active user count over a ramp from u0 to u1
// users over d: rounded, at least 1, at most the larger end.
func RampUsers(u0, u1 float64, d time.Duration) func(time.Duration) int {
	return func(elapsed time.Duration) int {
		f := min(elapsed.Seconds()/d.Seconds(), 1)
		return int(max(math.Round(u0+(u1-u0)*f), 1))
	}
}
