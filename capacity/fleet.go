package capacity

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/workload"
)

// FleetWorkload is what a plan says a fleet is offered: the requests (its
// classes, lengths and prefixes) and the load's shape (closed-loop users
// with think time, or an open loop's arrival process). experiment's
// FleetWorkload reads it from a plan; this package reads no plan.
type FleetWorkload struct {
	// Name is the plan's, for the simulated summaries.
	Name string
	// Requests gives request i as a run of the plan would send it
	// (workload.Mix).
	Requests interface{ Spec(i uint64) workload.Spec }
	// Seed draws the arrivals (and, through FleetSpec, think times).
	Seed uint64
	// OpenLoop: arrivals at Rate requests/s from the process named by
	// Arrival (schedule.Poisson, ...) with Burstiness; otherwise Users
	// users, each thinking Think between requests.
	OpenLoop   bool
	Users      int
	Think      schedule.ThinkTime
	Rate       float64
	Arrival    string
	Burstiness float64
	// NewAggregate returns an empty aggregate set up as the plan's run
	// would set it (summary.NewAggregate): every simulated window's
	// figures come from one.
	NewAggregate func() *record.Aggregate
}

// mode is the load's mode as records and summaries name it.
func (w *FleetWorkload) mode() string {
	if w.OpenLoop {
		return record.ModeOpen
	}
	return record.ModeClosed
}

// FleetOptions asks how many replicas of one server a load needs. The
// workload gives what is sent and the load's shape; the peak replaces its
// size.
type FleetOptions struct {
	Workload FleetWorkload
	Profile  sim.Profile
	Router   Router
	// PeakUsers (closed loop) or PeakRate (open loop, requests/s) is the
	// load to plan for; 0 keeps the workload's users or rate.
	PeakUsers int
	PeakRate  float64
	// Headroom plans for the peak times 1+Headroom (0.2: 20% spare).
	Headroom float64
	// SLOs must all hold at the planned load, judged as find-capacity
	// judges a probe: each shown by the binomial rule at Confidence
	// (default analyze.DefaultConfidence), a failed request counting as
	// a miss.
	SLOs       []record.SLO
	Confidence float64
	// MaxFailureRate bounds the share of failed requests (refused, or
	// unfinished at the drain's end), as in find-capacity: default
	// analyze.DefaultMaxFailureRate.
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
	DefaultFleetWarmup      = time.Minute
	DefaultFleetDuration    = 10 * time.Minute
	DefaultFleetMaxReplicas = 256
	// fleetDrain is how long requests in flight at the end of the window
	// may still finish; past it they count as failed (timed out).
	fleetDrain = 2 * time.Minute
)

// fleetProbe is one simulated fleet size and its verdict.
type fleetProbe struct {
	replicas     int
	summary      *record.Summary
	judged       analyze.SLOJudgement
	util, maxUtl float64
	hitShare     float64
}

func (p *fleetProbe) passed() bool { return p.judged.Passed }

// record is the probe as `inferload fleet` reports it.
func (p *fleetProbe) record() record.FleetProbe {
	return record.FleetProbe{Replicas: p.replicas, Passed: p.passed(), Reasons: p.judged.Reasons,
		Metrics: p.summary.Metrics, Throughput: p.summary.Throughput, FailureRate: p.summary.FailureRate,
		Utilisation: p.util, MaxUtilisation: p.maxUtl, PrefixHitShare: p.hitShare}
}

// PlanFleet searches the smallest number of replicas that meets every SLO
// at the planned load. Rule: a size passes when find-capacity's probe
// rule holds on its simulated window (every SLO shown by the binomial
// rule, the failure rate within its bound). The search first estimates
// the most load one replica carries (analyze.NextLoad over one-replica
// simulations; a load too light to judge a percentile counts as carried,
// since this is only where the search starts), starts the fleet at
// planned load ÷ that, then steps up until a size passes and down while
// the one below passes: the answer's neighbour below was simulated and
// failed.
func PlanFleet(o FleetOptions) (*record.Fleet, error) {
	f, err := newFleetSearch(o)
	if err != nil {
		return nil, err
	}
	return f.search()
}

type fleetSearch struct {
	o       FleetOptions
	w       *FleetWorkload
	rule    analyze.ProbeRule
	peak    float64
	planned float64
	probes  map[int]*fleetProbe
	// requests renders the workload once for every simulation of the
	// search (and of other routers' searches sharing it).
	requests *fleetRequests
}

func newFleetSearch(o FleetOptions) (*fleetSearch, error) {
	f := &fleetSearch{o: o.withDefaults(), probes: map[int]*fleetProbe{}}
	o, w := f.o, &f.o.Workload
	f.w = w
	f.requests = newFleetRequests(w, o.Profile.BlockSize)
	peak := float64(w.Users)
	switch {
	case !w.OpenLoop && o.PeakUsers > 0:
		peak = float64(o.PeakUsers)
	case w.OpenLoop && o.PeakRate > 0:
		peak = o.PeakRate
	case w.OpenLoop:
		peak = w.Rate
	}
	if o.PeakUsers > 0 && w.OpenLoop || o.PeakRate > 0 && !w.OpenLoop {
		return nil, errors.New("fleet: --peak-users plans a closed loop and --peak-rate an open one; the plan's load is the other kind")
	}
	if !(peak > 0) || o.Headroom < 0 || math.IsInf(o.Headroom, 0) {
		return nil, fmt.Errorf("fleet: peak load %g and headroom %g: want a positive peak and headroom >= 0", peak, o.Headroom)
	}
	f.peak, f.planned = peak, peak*(1+o.Headroom)
	if !w.OpenLoop {
		f.planned = math.Ceil(f.planned)
	}
	if len(o.SLOs) == 0 {
		return nil, errors.New("fleet: give at least one SLO (e.g. --slo 'ttft.p99<=2s'); a failure rate alone plans a fleet that is merely up")
	}
	if !(o.Confidence > 0 && o.Confidence < 1) || !(o.MaxFailureRate >= 0 && o.MaxFailureRate < 1) {
		return nil, fmt.Errorf("fleet: confidence %g and max failure rate %g: want fractions below 1", o.Confidence, o.MaxFailureRate)
	}
	f.rule = analyze.ProbeRule{SLOs: o.SLOs, MaxFailureRate: o.MaxFailureRate, Confidence: o.Confidence}
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
		o.MaxFailureRate = analyze.DefaultMaxFailureRate
	}
	if o.Confidence == 0 {
		o.Confidence = analyze.DefaultConfidence
	}
	if o.Workload.NewAggregate == nil {
		o.Workload.NewAggregate = record.NewAggregate
	}
	return o
}

// header is the answer's statement of what was asked.
func (f *fleetSearch) header() *record.Fleet {
	o := f.o
	out := &record.Fleet{Profile: o.Profile.Name, Router: string(cmp.Or(o.Router, RoundRobin)), Mode: f.w.mode(),
		Peak: f.peak, Headroom: o.Headroom, Load: f.planned, Confidence: o.Confidence, MaxFailureRate: o.MaxFailureRate,
		WarmupS: o.Warmup.Seconds(), WindowS: o.Duration.Seconds(), Probes: []record.FleetProbe{}, Shown: record.ShownFor(o.SLOs)}
	for _, b := range o.SLOs {
		out.SLOs = append(out.SLOs, b.String())
	}
	return out
}

// search runs the two phases and picks the answer.
func (f *fleetSearch) search() (*record.Fleet, error) {
	out := f.header()
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
	for !pass.passed() && n < f.o.MaxReplicas {
		n++
		if pass, err = f.probe(n); err != nil {
			return nil, err
		}
	}
	for pass.passed() && n > 1 {
		below, err := f.probe(n - 1)
		if err != nil {
			return nil, err
		}
		if !below.passed() {
			break
		}
		n, pass = n-1, below
	}
	for _, k := range slices.Sorted(maps.Keys(f.probes)) {
		out.Probes = append(out.Probes, f.probes[k].record())
	}
	if pass.passed() {
		out.Replicas = n
	}
	out.Reason = f.reason(out)
	f.cost(out)
	return out, nil
}

// perReplica estimates the most load one replica carries within the
// SLOs, by analyze.NextLoad's doubling and bisection from 1 user or
// request/s up to the planned load (to 5%); 0 when even the least failed.
func (f *fleetSearch) perReplica() (float64, error) {
	o := analyze.SearchOptions{Low: min(1, f.planned), High: f.planned, Whole: !f.w.OpenLoop, Precision: 0.05, MaxProbes: 16}
	var passed, failed []float64
	for {
		load, done := analyze.NextLoad(passed, failed, o)
		if done {
			return analyze.Capacity(passed, failed), nil
		}
		p, err := f.simulate(1, load)
		if err != nil {
			return 0, err
		}
		if p.passed() || p.judged.Inconclusive {
			passed = append(passed, load)
		} else {
			failed = append(failed, load)
		}
	}
}

// probe simulates n replicas at the planned load, once per n.
func (f *fleetSearch) probe(n int) (*fleetProbe, error) {
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

// spec is the simulation of replicas ready at the given instants until
// end, its load left to the caller.
func (f *fleetSearch) spec(ready []time.Duration, end time.Duration) FleetSpec {
	spec := FleetSpec{Profile: f.o.Profile, ReadyAt: ready, Router: f.o.Router, Request: f.requests.request,
		Duration: end, Drain: fleetDrain, Seed: f.w.Seed}
	if !f.w.OpenLoop && f.requests.sessions != nil {
		spec.UserRequest = f.requests.userRequest
	}
	return spec
}

// simulate runs n replicas at load and judges the summary.
func (f *fleetSearch) simulate(n int, load float64) (*fleetProbe, error) {
	o, w := f.o, f.w
	spec := f.spec(make([]time.Duration, n), o.Warmup+o.Duration)
	if !w.OpenLoop {
		spec.Load = Load{Users: int(load), Think: w.Think.Sample, ThinkMean: w.Think.Mean()}
	} else {
		arr, err := schedule.NewArrivals(w.Arrival, load, w.Burstiness, w.Seed)
		if err != nil {
			return nil, fmt.Errorf("fleet: %w", err)
		}
		spec.Load = Load{Arrivals: arr}
	}
	agg, tallies := w.NewAggregate(), make([]analyze.Tally, len(f.rule.SLOs))
	var hits prefixHits
	st, err := RunFleet(spec, func(out *FleetOutcome) {
		r := out.Record(w.OpenLoop, o.Warmup)
		agg.Add(&r)
		analyze.CountSLOs(&r, f.rule.SLOs, tallies)
		if !r.Warmup {
			hits.add(out)
		}
	})
	if err != nil {
		return nil, err
	}
	s := agg.Summary(record.RunInfo{Name: w.Name, Mode: w.mode(),
		WarmupEndUS: o.Warmup.Microseconds(), MeasureEndUS: spec.Duration.Microseconds(), EndUS: st.End.Microseconds()})
	p := &fleetProbe{replicas: n, summary: s, judged: f.rule.Judge(s.FailureRate, tallies), hitShare: hits.share()}
	for _, rs := range st.Replicas {
		p.util += rs.Utilisation / float64(n)
		p.maxUtl = max(p.maxUtl, rs.Utilisation)
	}
	return p, nil
}

// prefixHits sums the prompt tokens of requests that reached a replica's
// first step, and what its prefix cache served of them.
type prefixHits struct{ cached, prompt int64 }

func (h *prefixHits) add(o *FleetOutcome) {
	if o.Generated > 0 {
		h.cached += int64(o.CachedTokens)
		h.prompt += int64(o.PromptTokens)
	}
}

// share is cached ÷ prompt tokens, 0 with none.
func (h *prefixHits) share() float64 {
	if h.prompt == 0 {
		return 0
	}
	return float64(h.cached) / float64(h.prompt)
}

// Record is the outcome as the record a real run of the request would
// have written (open: an open loop's, whose intended time is its send
// time; sent before warmup: a warm-up record), so one aggregate computes
// every figure.
func (o *FleetOutcome) Record(open bool, warmup time.Duration) record.Result {
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
	case errors.Is(o.Err, ErrUnfinished):
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
func (f *fleetSearch) reason(out *record.Fleet) string {
	load := record.LoadText(f.planned, f.w.mode())
	if out.Replicas == 0 {
		return fmt.Sprintf("no fleet of up to %d replicas meets every SLO at %s; raise --max-replicas or relax the SLOs", f.o.MaxReplicas, load)
	}
	msg := fmt.Sprintf("%d replicas meet every SLO at %s", out.Replicas, load)
	if below, ok := f.probes[out.Replicas-1]; ok && len(below.judged.Misses) > 0 {
		msg += fmt.Sprintf("; %d do not: %s", out.Replicas-1, below.judged.Misses[0])
	}
	return msg
}

// cost fills the cost figures from the chosen probe.
func (f *fleetSearch) cost(out *record.Fleet) {
	if f.o.PricePerHour <= 0 || out.Replicas == 0 {
		return
	}
	out.PricePerHour = f.o.PricePerHour
	out.CostPerHour = f.o.PricePerHour * float64(out.Replicas)
	if tps := f.probes[out.Replicas].summary.Throughput.OutputTokensPerS; tps > 0 {
		out.CostPerMillionTokens = out.CostPerHour / (tps * 3600 / 1e6)
	}
}
