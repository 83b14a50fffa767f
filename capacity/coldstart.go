package capacity

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
)

// ColdStart asks what a fleet suffers while it scales out: From replicas
// serve From/To of the planned load; at the end of the warm-up the load
// ramps to the planned one over Ramp, and the autoscaler starts To−From
// more replicas at once, each taking ColdStart to come up (the 45–120 s a
// GPU instance takes to load a model).
type ColdStart struct {
	From, To        int
	ColdStart, Ramp time.Duration
}

// coldStartWindow is the length of the windows the start-up is shown in.
const coldStartWindow = 30 * time.Second

// coldStartTail is how long after the last replica is up the start-up
// window is judged: queues built during the start drain after it.
const coldStartTail = time.Minute

// SimulateColdStart runs c on the fleet o describes and judges the
// start-up window [ramp start, last replica up + 1 min] by the capacity
// rule, with the figures per 30 s window from the ramp's start.
func SimulateColdStart(o FleetOptions, c ColdStart) (*record.FleetColdStart, error) {
	f, err := newFleetSearch(o)
	if err != nil {
		return nil, err
	}
	o = f.o
	if c.From < 1 || c.To <= c.From || c.ColdStart <= 0 || c.Ramp < 0 {
		return nil, fmt.Errorf("cold start: from %d to %d replicas, %s to start, ramp %s: want 1 <= from < to and a start time > 0", c.From, c.To, c.ColdStart, c.Ramp)
	}
	t0 := o.Warmup
	up := t0 + c.ColdStart
	end := max(up+coldStartTail, t0+c.Ramp) + coldStartWindow
	ready := make([]time.Duration, c.To)
	for k := c.From; k < c.To; k++ {
		ready[k] = up
	}
	base := f.planned * float64(c.From) / float64(c.To)
	w := f.w
	spec := f.spec(ready, end)
	if !w.OpenLoop {
		spec.Load = f.rampUsers(int(math.Round(base)), int(f.planned), t0, c.Ramp)
	} else {
		unit, err := schedule.NewArrivals(w.Arrival, 1, w.Burstiness, w.Seed)
		if err != nil {
			return nil, fmt.Errorf("cold start: %w", err)
		}
		spec.Load = Load{Arrivals: &rampedArrivals{unit: unit, r0: base, r1: f.planned, t0: t0, d: c.Ramp}}
	}
	out := &record.FleetColdStart{From: c.From, To: c.To, ColdStartS: c.ColdStart.Seconds(), RampS: c.Ramp.Seconds(),
		JudgedS: (up + coldStartTail - t0).Seconds()}
	win := newStartupWindows(t0, end, f.rule.SLOs)
	tallies := make([]analyze.Tally, len(f.rule.SLOs))
	agg := w.NewAggregate()
	if _, err := RunFleet(spec, func(fo *FleetOutcome) {
		r := fo.Record(w.OpenLoop, t0) // before the ramp is warm-up
		win.add(&r, fo.Arrival)
		if fo.Arrival >= t0 && fo.Arrival < up+coldStartTail {
			agg.Add(&r)
			analyze.CountSLOs(&r, f.rule.SLOs, tallies)
		}
	}); err != nil {
		return nil, err
	}
	s := agg.Summary(record.RunInfo{Name: w.Name, Mode: w.mode(), WarmupEndUS: t0.Microseconds(),
		MeasureEndUS: (up + coldStartTail).Microseconds()})
	j := f.rule.Judge(s.FailureRate, tallies)
	out.Passed, out.Reasons = j.Passed, j.Reasons
	out.Windows = win.windows(ready)
	return out, nil
}

// rampUsers is a closed loop of u1 users of which u0 start at once
// (spread over a think time) and the rest one by one over the ramp.
func (f *fleetSearch) rampUsers(u0, u1 int, t0, ramp time.Duration) Load {
	u0 = min(max(u0, 1), u1)
	think := f.w.Think
	mean := think.Mean()
	return Load{Users: u1, Think: think.Sample, ThinkMean: mean, StartAt: func(u int) time.Duration {
		if u < u0 {
			return mean * time.Duration(u) / time.Duration(u0)
		}
		return t0 + ramp*time.Duration(u-u0)/time.Duration(max(u1-u0, 1))
	}}
}

// rampedArrivals is an open loop at r0 until t0, rising linearly to r1
// over d, then staying there. It maps a unit-rate process (Poisson, gamma
// or constant, so the burstiness is kept) through the inverse of the
// cumulative rate Λ(t), the ramp's part solved by schedule.RampTime:
//
//	Λ(t) = r0·t                                   t ≤ t0
//	     = r0·t + (r1−r0)·(t−t0)²/(2d)            t0 < t ≤ t0+d
//	     = Λ(t0+d) + r1·(t−t0−d)                  after
type rampedArrivals struct {
	unit   interface{ Next() time.Duration }
	r0, r1 float64
	t0, d  time.Duration
}

func (a *rampedArrivals) Next() time.Duration {
	s := a.unit.Next().Seconds() // operational time: unit rate
	t0, d := a.t0.Seconds(), a.d.Seconds()
	l0 := a.r0 * t0
	if s <= l0 {
		return secondsOf(s / a.r0)
	}
	l1 := l0 + a.r0*d + (a.r1-a.r0)*d/2
	if s <= l1 && d > 0 {
		return secondsOf(t0 + schedule.RampTime(a.r0, a.r1, d, s-l0))
	}
	return secondsOf(t0 + d + (s-l1)/a.r1)
}

func secondsOf(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// startupWindows cuts the start-up into 30 s windows by arrival.
type startupWindows struct {
	t0   time.Duration
	slos []record.SLO
	n    []int
	met  []int
	ttft []*record.Hist
}

func newStartupWindows(t0, end time.Duration, slos []record.SLO) *startupWindows {
	k := int((end - t0 + coldStartWindow - 1) / coldStartWindow)
	w := &startupWindows{t0: t0, slos: slos, n: make([]int, k), met: make([]int, k), ttft: make([]*record.Hist, k)}
	for i := range w.ttft {
		w.ttft[i] = record.NewHist()
	}
	return w
}

func (w *startupWindows) add(r *record.Result, arrival time.Duration) {
	if arrival < w.t0 {
		return
	}
	i := int((arrival - w.t0) / coldStartWindow)
	if i >= len(w.n) {
		return
	}
	w.n[i]++
	if r.OK() && !slices.ContainsFunc(w.slos, func(b record.SLO) bool { return !b.Met(r) }) {
		w.met[i]++
	}
	if r.OK() {
		w.ttft[i].Record(r.TTFTUS)
	}
}

func (w *startupWindows) windows(ready []time.Duration) []record.FleetWindow {
	out := make([]record.FleetWindow, 0, len(w.n))
	for i := range w.n {
		start := w.t0 + time.Duration(i)*coldStartWindow
		upCount := 0
		for _, t := range ready {
			if t <= start {
				upCount++
			}
		}
		fw := record.FleetWindow{StartS: start.Seconds(), Replicas: upCount, Requests: w.n[i]}
		if w.n[i] > 0 {
			fw.MetShare = float64(w.met[i]) / float64(w.n[i])
		}
		fw.TTFT = w.ttft[i].Stats()
		out = append(out, fw)
	}
	return out
}
