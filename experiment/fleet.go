package experiment

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/workload"
)

// FleetOptions asks how many replicas of one server a load needs. The
// plan gives the workload (classes, lengths, prefixes) and the load's
// shape (closed-loop users with think time, or an open loop's arrival
// process); the peak replaces its size.
type FleetOptions struct {
	Plan    *plan.Plan
	Profile sim.Profile
	Router  sim.Router
	// PeakUsers (closed loop) or PeakRate (open loop, requests/s) is the
	// load to plan for; 0 keeps the plan's concurrency or rate.
	PeakUsers int
	PeakRate  float64
	// Headroom plans for the peak times 1+Headroom (0.2: 20% spare).
	Headroom float64
	// SLOs must all hold on the simulated run's summary (threshold
	// syntax, e.g. "ttft_ms.p99 < 2000"); the plan's thresholds are added.
	SLOs []analyze.Threshold
	// MaxFailureRate bounds the share of failed requests (refused or
	// unfinished): percentiles of the successes alone would hide an
	// overloaded fleet. Default DefaultFleetMaxFailureRate.
	MaxFailureRate float64
	// Warmup and Duration are the simulated window (virtual time):
	// defaults DefaultFleetWarmup and DefaultFleetDuration.
	Warmup, Duration time.Duration
	// MaxReplicas bounds the search (default DefaultFleetMaxReplicas).
	MaxReplicas int
	// PricePerHour is one replica's price, for the cost figures; 0: none.
	PricePerHour float64
}

// Fleet defaults.
const (
	DefaultFleetWarmup         = time.Minute
	DefaultFleetDuration       = 10 * time.Minute
	DefaultFleetMaxReplicas    = 256
	DefaultFleetMaxFailureRate = 0.001
	// fleetDrain is how long requests in flight at the end of the window
	// may still finish; past it they count as failed (timed out).
	fleetDrain = 2 * time.Minute
)

// FleetProbe is one simulated fleet size at the planned load.
type FleetProbe struct {
	Replicas int
	// Load is the users or requests/s it was offered.
	Load float64
	// Summary holds its figures, computed as a run's are.
	Summary    *record.Summary
	Thresholds []record.ThresholdResult
	Passed     bool
	// Utilisation is the replicas' mean busy share; MaxUtilisation the
	// busiest one's.
	Utilisation, MaxUtilisation float64
}

// FleetPlan is the answer: the smallest fleet meeting every SLO at the
// planned load, and the probes behind it.
type FleetPlan struct {
	// Replicas is the answer; 0 when even MaxReplicas did not suffice.
	Replicas int
	// Load is the planned load (peak × (1+headroom)), Mode its kind.
	Load float64
	Mode string
	// PerReplica is the most load one replica carried within the SLOs
	// (the search's first estimate), 0 when not even the least did.
	PerReplica float64
	// Probes are the fleet sizes simulated at the planned load, by size.
	Probes []FleetProbe
	// Reason says why Replicas is the answer, in words.
	Reason string
	// CostPerHour and CostPerMillionTokens are set when a price was given.
	CostPerHour, CostPerMillionTokens float64
}

// PlanFleet searches the smallest number of replicas that meets every SLO
// at the planned load. Rule: a size passes when every threshold holds on
// the summary of its simulated window and the failure rate is at most
// MaxFailureRate. The search first finds the most load one replica
// carries within the SLOs (bisection), starts the fleet at planned load ÷
// that, then steps up until a size passes and down while the one below
// passes, so the answer's neighbour below was simulated and failed.
func PlanFleet(o FleetOptions) (*FleetPlan, error) {
	f, err := newFleetSearch(o)
	if err != nil {
		return nil, err
	}
	return f.search()
}

type fleetSearch struct {
	o       FleetOptions
	mix     *workload.Mix
	closed  bool
	think   schedule.ThinkTime
	thresh  []analyze.Threshold
	planned float64
	probes  map[int]*FleetProbe
}

func newFleetSearch(o FleetOptions) (*fleetSearch, error) {
	o = o.withDefaults()
	p := o.Plan
	mix, err := newSource(p, newWorkloadFiles())
	if err != nil {
		return nil, fmt.Errorf("fleet: workload: %w", err)
	}
	f := &fleetSearch{o: o, mix: mix, closed: !p.Load.OpenLoop(), probes: map[int]*FleetProbe{}}
	if p.Load.Trace.Path != "" || p.Load.FLOPsPerS > 0 {
		return nil, errors.New("fleet: plan a closed loop (load.concurrency) or an open loop at a rate (load.rate); traces and FLOP pacing are not simulated")
	}
	if f.think, err = schedule.ParseThinkTime(p.Load.ThinkTime); err != nil {
		return nil, fmt.Errorf("fleet: load.think_time: %w", err)
	}
	peak := float64(p.Load.Concurrency)
	switch {
	case f.closed && o.PeakUsers > 0:
		peak = float64(o.PeakUsers)
	case !f.closed && o.PeakRate > 0:
		peak = o.PeakRate
	case !f.closed:
		peak = p.Load.Rate
	}
	if o.PeakUsers > 0 && !f.closed || o.PeakRate > 0 && f.closed {
		return nil, errors.New("fleet: --peak-users plans a closed loop and --peak-rate an open one; the plan's load is the other kind")
	}
	if !(peak > 0) || o.Headroom < 0 || math.IsInf(o.Headroom, 0) {
		return nil, fmt.Errorf("fleet: peak load %g and headroom %g: want a positive peak and headroom >= 0", peak, o.Headroom)
	}
	f.planned = peak * (1 + o.Headroom)
	if f.closed {
		f.planned = math.Ceil(f.planned)
	}
	if f.thresh, err = fleetThresholds(o); err != nil {
		return nil, err
	}
	return f, nil
}

func (o FleetOptions) withDefaults() FleetOptions {
	if o.Warmup == 0 {
		o.Warmup = DefaultFleetWarmup
	}
	if o.Duration == 0 {
		o.Duration = DefaultFleetDuration
	}
	if o.MaxReplicas == 0 {
		o.MaxReplicas = DefaultFleetMaxReplicas
	}
	if o.MaxFailureRate == 0 {
		o.MaxFailureRate = DefaultFleetMaxFailureRate
	}
	return o
}

// fleetThresholds are the user's SLOs, the plan's thresholds and the
// failure-rate bound, each a threshold so one evaluator judges them all.
func fleetThresholds(o FleetOptions) ([]analyze.Threshold, error) {
	plans, err := analyze.ParseThresholds(o.Plan.Thresholds)
	if err != nil {
		return nil, fmt.Errorf("fleet: thresholds: %w", err)
	}
	fail, err := analyze.ParseThreshold(fmt.Sprintf("failure_rate <= %g", o.MaxFailureRate))
	if err != nil {
		return nil, fmt.Errorf("fleet: max failure rate %g: %w", o.MaxFailureRate, err)
	}
	out := append(append(append([]analyze.Threshold{}, o.SLOs...), plans...), fail)
	if len(out) == 1 {
		return nil, errors.New("fleet: give at least one SLO (e.g. --slo 'ttft_ms.p99 < 2000'); a failure rate alone plans for a fleet that is merely up")
	}
	return out, nil
}

// search runs the two phases and picks the answer.
func (f *fleetSearch) search() (*FleetPlan, error) {
	out := &FleetPlan{Load: f.planned, Mode: f.o.Plan.Load.Mode()}
	per, err := f.perReplica()
	if err != nil {
		return nil, err
	}
	out.PerReplica = per
	// One replica short of a load unit gets a replica per unit to start.
	n := min(f.o.MaxReplicas, max(1, int(math.Ceil(f.planned/max(per, 1)))))
	pass, err := f.probe(n)
	if err != nil {
		return nil, err
	}
	for !pass.Passed && n < f.o.MaxReplicas {
		n++
		if pass, err = f.probe(n); err != nil {
			return nil, err
		}
	}
	for pass.Passed && n > 1 {
		below, err := f.probe(n - 1)
		if err != nil {
			return nil, err
		}
		if !below.Passed {
			break
		}
		n, pass = n-1, below
	}
	for _, k := range slices.Sorted(maps.Keys(f.probes)) {
		out.Probes = append(out.Probes, *f.probes[k])
	}
	if pass.Passed {
		out.Replicas = n
	}
	out.Reason = f.reason(out)
	f.cost(out)
	return out, nil
}

// perReplica bisects the most load one replica carries within the SLOs:
// whole users in a closed loop, requests/s to 1% in an open one. It
// doubles from 1 until a load fails (or the planned load passes), then
// bisects; 0 means even a load of 1 failed.
func (f *fleetSearch) perReplica() (float64, error) {
	lo, hi := 0.0, 1.0
	for {
		hi = min(hi, f.planned)
		ok, err := f.oneReplica(hi)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		if lo = hi; hi == f.planned {
			return lo, nil // one replica carries the whole load
		}
		hi *= 2
	}
	for lo > 0 && hi-lo > f.resolution(lo) {
		mid := (lo + hi) / 2
		if f.closed {
			mid = math.Floor(mid)
		}
		ok, err := f.oneReplica(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// resolution is how finely perReplica pins the load: a user, or 1%.
func (f *fleetSearch) resolution(lo float64) float64 {
	if f.closed {
		return 1
	}
	return lo / 100
}

func (f *fleetSearch) oneReplica(load float64) (bool, error) {
	p, err := f.simulate(1, load)
	return err == nil && p.Passed, err
}

// probe simulates n replicas at the planned load, once per n.
func (f *fleetSearch) probe(n int) (*FleetProbe, error) {
	if p, ok := f.probes[n]; ok {
		return p, nil
	}
	p, err := f.simulate(n, f.planned)
	if err != nil {
		return nil, err
	}
	f.probes[n] = p
	return p, nil
}

// simulate runs n replicas at load and judges the summary.
func (f *fleetSearch) simulate(n int, load float64) (*FleetProbe, error) {
	o := f.o
	spec := sim.FleetSpec{
		Profile: o.Profile, ReadyAt: make([]time.Duration, n), Router: o.Router,
		Request:  f.request,
		Duration: o.Warmup + o.Duration, Drain: fleetDrain, Seed: o.Plan.Workload.Seed,
	}
	if f.closed {
		spec.Load = sim.Load{Users: int(load), Think: f.think.Sample, ThinkMean: f.think.Mean()}
	} else {
		arr, err := schedule.NewArrivals(arrivalKind(o.Plan), load, o.Plan.Load.Burstiness, o.Plan.Workload.Seed)
		if err != nil {
			return nil, fmt.Errorf("fleet: %w", err)
		}
		spec.Load = sim.Load{Arrivals: arr}
	}
	agg := newAggregate(o.Plan)
	st, err := sim.RunFleet(spec, func(out *sim.FleetOutcome) {
		r := fleetRecord(out, !f.closed, o.Warmup)
		agg.Add(&r)
	})
	if err != nil {
		return nil, err
	}
	s := agg.Summary(record.RunInfo{Name: o.Plan.Name, Mode: o.Plan.Load.Mode(),
		WarmupEndUS: o.Warmup.Microseconds(), MeasureEndUS: spec.Duration.Microseconds(), EndUS: st.End.Microseconds()})
	res, err := analyze.Evaluate(f.thresh, s)
	if err != nil {
		return nil, err
	}
	p := &FleetProbe{Replicas: n, Load: load, Summary: s, Thresholds: res, Passed: analyze.Failed(res) == 0}
	for _, rs := range st.Replicas {
		p.Utilisation += rs.Utilisation / float64(n)
		p.MaxUtilisation = max(p.MaxUtilisation, rs.Utilisation)
	}
	return p, nil
}

// request is request i of the plan's workload as the fleet sees it: its
// class, lengths (the output exactly max_tokens, as with ignore_eos) and
// the prompt's block hashes for prefix caching and the prefix router.
func (f *fleetSearch) request(i uint64) sim.FleetRequest {
	spec := f.mix.Spec(i)
	h := sim.NewPromptHasher(f.o.Profile.BlockSize)
	for _, m := range spec.Messages {
		h.AddText(m.Content)
	}
	if len(spec.Messages) == 0 {
		h.AddText(spec.Prompt)
	}
	return sim.FleetRequest{Class: spec.Class, PromptTokens: max(1, spec.InputTokens),
		OutputTokens: max(1, spec.MaxTokens), BlockHashes: h.BlockHashes()}
}

// fleetRecord turns a simulated request into the record a real run of it
// would have written, so one aggregate computes every figure.
func fleetRecord(o *sim.FleetOutcome, open bool, warmup time.Duration) record.Result {
	us := func(d time.Duration) int64 { return d.Microseconds() }
	r := record.Result{ID: o.Index + 1, Class: o.Class, OpenLoop: open, SendUS: us(o.Arrival),
		Warmup: o.Arrival < warmup, Stream: true, InputTokens: o.PromptTokens, MaxTokens: o.OutputTokens,
		IgnoreEOS: true, OutputTokens: o.Generated, TokenSource: record.TokensUsage, CachedTokens: o.CachedTokens}
	if open {
		r.IntendedUS = r.SendUS
	}
	if o.Generated > 0 {
		r.TTFTUS = us(o.FirstToken - o.Arrival)
		r.EventsUS = make([]int64, len(o.TokenOffsets))
		for k, d := range o.TokenOffsets {
			r.EventsUS[k] = us(d)
		}
	}
	switch {
	case o.Err == nil:
		r.Status, r.E2EUS, r.FinishReason = 200, us(o.LastToken-o.Arrival), "length"
	case errors.Is(o.Err, sim.ErrUnfinished):
		r.E2EUS = us(max(o.LastToken, o.Arrival) - o.Arrival)
		r.Error = record.ErrTimeoutBeforeTTFT
		if o.Generated > 0 {
			r.Error = record.ErrTimeoutAfterTTFT
		}
	case errors.Is(o.Err, sim.ErrQueueFull):
		r.Status, r.Error = 429, record.ErrHTTP429
	case errors.Is(o.Err, sim.ErrTooLong):
		r.Status, r.Error = 400, record.ErrHTTP4xx
	default:
		r.Status, r.Error = 503, record.ErrHTTP5xx
	}
	if r.Error != record.ErrNone {
		r.ErrorMsg = o.Err.Error()
	}
	return r
}

// reason says why the plan's answer is what it is.
func (f *fleetSearch) reason(out *FleetPlan) string {
	unit := "users"
	if !f.closed {
		unit = "req/s"
	}
	if out.Replicas == 0 {
		return fmt.Sprintf("no fleet of up to %d replicas meets every SLO at %g %s; raise --max-replicas or relax the SLOs", f.o.MaxReplicas, f.planned, unit)
	}
	msg := fmt.Sprintf("%d replicas meet every SLO at %g %s", out.Replicas, f.planned, unit)
	if below, ok := f.probes[out.Replicas-1]; ok {
		for _, t := range below.Thresholds {
			if !t.Passed {
				msg += fmt.Sprintf("; %d do not (%s is %.4g)", out.Replicas-1, t.Expr, t.Value)
				break
			}
		}
	}
	return msg
}

// cost fills the cost figures from the chosen probe.
func (f *fleetSearch) cost(out *FleetPlan) {
	if f.o.PricePerHour <= 0 || out.Replicas == 0 {
		return
	}
	out.CostPerHour = f.o.PricePerHour * float64(out.Replicas)
	if tps := f.probes[out.Replicas].Summary.Throughput.OutputTokensPerS; tps > 0 {
		out.CostPerMillionTokens = out.CostPerHour / (tps * 3600 / 1e6)
	}
}
