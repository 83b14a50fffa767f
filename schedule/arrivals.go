package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/inferload/inferload/internal/randx"
)

// Open-loop arrival processes accepted by NewArrivals.
const (
	// Constant spaces requests exactly 1/rate apart.
	Constant = "constant"
	// Poisson draws exponential gaps with mean 1/rate: independent
	// arrivals, as from many unrelated users.
	Poisson = "poisson"
	// Gamma draws gamma-distributed gaps with mean 1/rate whose squared
	// coefficient of variation is 1/burstiness: burstiness 1 is Poisson,
	// below 1 burstier (clumps and lulls), above 1 smoother.
	Gamma = "gamma"
)

// ArrivalKinds lists the arrival processes NewArrivals accepts.
func ArrivalKinds() []string { return []string{Constant, Poisson, Gamma} }

// arrivalStream is the second PCG seed word for arrival gaps. It keeps the
// arrival stream apart from other streams seeded with the same plan seed
// (workload uses the request index there, starting at 0).
const arrivalStream = 0x5eed_a771_7a15

// Arrivals is an open-loop schedule: the intended start offsets of
// successive requests, measured from the start of the run.
//
// Offsets are absolute. They come from adding up inter-arrival gaps in
// float64 seconds (or, for Constant, from i/rate directly), never from
// sleeping and then measuring, so a late request does not push back the ones
// after it and the schedule does not drift. The engine compares each offset
// with the clock to get the request's queue delay.
//
// An Arrivals is not safe for concurrent use: one dispatcher owns it.
type Arrivals struct {
	kind       string
	rate       float64
	burstiness float64
	rng        *rand.Rand
	n          uint64  // arrivals returned so far
	next       float64 // offset of the next arrival, seconds (random kinds)
}

// NewArrivals returns the schedule of an arrival process kind (Constant,
// Poisson or Gamma) at rate requests per second. burstiness is the gamma
// shape and is only used, and only checked, for Gamma. seed fixes the
// random gaps: the same arguments give the same schedule.
func NewArrivals(kind string, rate, burstiness float64, seed uint64) (*Arrivals, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("arrival rate %v: want a finite number of requests per second above 0", rate)
	}
	switch kind {
	case Constant, Poisson:
	case Gamma:
		if !(burstiness > 0) || math.IsInf(burstiness, 0) {
			return nil, fmt.Errorf("gamma burstiness %v: want a finite number above 0 (1 is Poisson, below 1 burstier)", burstiness)
		}
	default:
		return nil, fmt.Errorf("arrival %q: want one of %s", kind, strings.Join(ArrivalKinds(), ", "))
	}
	return &Arrivals{
		kind:       kind,
		rate:       rate,
		burstiness: burstiness,
		rng:        rand.New(rand.NewPCG(seed, arrivalStream)),
	}, nil
}

// Next returns the intended offset from the run start of the next request.
// The first request is due at 0 for every kind; offsets never decrease.
func (a *Arrivals) Next() time.Duration {
	defer func() { a.n++ }()
	if a.kind == Constant {
		return seconds(float64(a.n) / a.rate)
	}
	at := a.next
	a.next += a.gap()
	return seconds(at)
}

// gap draws the time to the following arrival, in seconds.
func (a *Arrivals) gap() float64 {
	if a.kind == Gamma {
		// gamma(shape k, scale θ) has mean kθ and CV² 1/k; θ = 1/(rate·k)
		// makes the mean 1/rate whatever the burstiness.
		return randx.Gamma(a.rng, a.burstiness) / (a.rate * a.burstiness)
	}
	return a.rng.ExpFloat64() / a.rate
}

// seconds converts float64 seconds to a Duration, saturating instead of
// overflowing for schedules that reach beyond ~292 years.
func seconds(s float64) time.Duration {
	ns := s * float64(time.Second)
	if ns >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ns)
}
