// Package engine runs one phase of a load test: its Shape (a closed loop
// of users or an open loop of arrivals) says when each request is due;
// the engine drives a protocol client, applies the stop conditions and
// the in-flight cap, and emits one record.Result per request.
package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/workload"
)

// Source yields the content of request i. It must be a pure function of i
// and safe for concurrent use (workload.Generator is one).
type Source interface {
	Spec(i uint64) workload.Spec
}

// Arrivals yields the intended offsets of open-loop requests from the run's
// start, in order (schedule.Arrivals is one); OpenLoop sends them.
type Arrivals interface {
	Next() time.Duration
}

// ThinkTime is a closed-loop user's pause between requests
// (schedule.ThinkTime is one); ClosedLoop applies it.
type ThinkTime interface {
	Sample(rng *rand.Rand) time.Duration
}

// Renderer turns a spec into a request ready to send. It runs before the
// request is due, so body rendering never delays a send.
type Renderer func(spec workload.Spec) (*protocol.Request, error)

// Config describes one phase: its Shape, and at least one of Duration or
// Requests.
//
// Issuing stops at Duration, or once Requests have been issued, whichever
// comes first, whatever the arrivals do: an open loop whose schedule has
// nothing more due before Duration (a sparse rate, a trace that ran out)
// issues nothing more but still lasts Duration, so the measured window is
// the configured one. Only without Duration does a schedule that runs out
// (a trace played once) end the phase, at its last request.
type Config struct {
	Client protocol.Client
	Source Source
	Render Renderer

	// Shape is the phase's load (required): a ClosedLoop, an OpenLoop, or
	// any shape that runs through one of them.
	Shape Shape

	// Duration is how long the phase issues requests (0: no limit).
	Duration time.Duration
	// Requests stops issuing after this many (0: no limit).
	Requests int
	// Warmup flags requests due in the first Warmup of the phase.
	Warmup time.Duration
	// Grace is how long in-flight requests may run once issuing stops
	// (0 means DefaultGrace).
	Grace time.Duration
	// Seed seeds the closed-loop users' think-time generators.
	Seed uint64
	// TraceRun, when not empty, names the run for the join key every
	// request carries (record.TraceID(TraceRun, TraceIDOf(id))): sent as
	// traceparent and x-request-id, kept as the record's TraceID. Empty
	// sends neither. TraceIDOf is the run-wide id the engine's request id
	// will have in its record (nil: id itself), so a staged run's and a
	// segment's keys stay unique and match their records.
	TraceRun  string
	TraceIDOf func(id uint64) uint64
	// Retry is the client's retry policy; the zero value never retries.
	// A retried request stays one record, its earlier attempts listed in
	// Result.Attempts, its latency counted from the first attempt's origin.
	Retry RetryPolicy
	// Chains maps a class name to the steps its requests run in sequence
	// (chain.go); requests of other classes are single calls.
	Chains map[string]*Chain
	// Graphs maps a class name to the graph of calls each of its requests
	// (tasks) runs (graph.go). A class has a chain or a graph, not both.
	Graphs map[string]*Graph
	// Prefixes, when set, marks the requests whose shared prefix an
	// earlier request of the run sent (PrefixLedger); one ledger serves
	// all of a run's phases.
	Prefixes *PrefixLedger
	// Clock is what the engine reads the time from and waits with; nil
	// means PreciseClock (the real clock, precise open-loop pacing).
	Clock Clock
	// Origin, when set and not after Run starts, is the phase's time
	// zero in place of Run's start: a phase that takes over from another
	// (a load change) starts its schedule where that one stopped issuing,
	// so the client's own start-up lag shows as queue delay, not as a
	// hole in the load. Duration and Warmup count from it too.
	Origin time.Time
}

// DefaultGrace is the grace period when Config.Grace is zero: the
// schedule's, which the plan's load.grace defaults to as well.
const DefaultGrace = schedule.DefaultGrace

func (c *Config) validate() error {
	var errs []error
	if c.Client == nil || c.Source == nil || c.Render == nil {
		errs = append(errs, errors.New("engine: Client, Source and Render are required"))
	}
	if c.Shape == nil {
		errs = append(errs, errors.New("engine: set Shape (a ClosedLoop of users or an OpenLoop of arrivals)"))
	} else if err := c.Shape.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Duration <= 0 && c.Requests <= 0 {
		errs = append(errs, errors.New("engine: set Duration or Requests so the phase ends"))
	}
	if c.Requests < 0 || c.Grace < 0 || c.Warmup < 0 {
		errs = append(errs, errors.New("engine: counts and durations must not be negative"))
	}
	if err := c.Retry.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.validateGraphs(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Engine runs one phase. Create it with New, then call Run once.
type Engine struct {
	cfg   Config
	clock Clock

	start     time.Time
	startedCh chan struct{}
	issued    atomic.Int64
	// allIssued is closed once Requests requests are admitted: issuing
	// is over, and what is in flight gets Grace (graceForTheLast; a closed
	// loop's users would otherwise hold the phase until their requests'
	// own timeouts).
	allIssued     chan struct{}
	allIssuedOnce sync.Once

	inFlight  atomic.Int64
	stoppedAt atomic.Int64 // µs offset when issuing stopped; 0 while issuing
	nextIndex atomic.Uint64

	// gate makes stopping and issuing exclusive: a request is admitted
	// under its read lock, StopIssuing cancels issuing under its write
	// lock, so once StopIssuing returns no request is admitted.
	gate sync.RWMutex
	// stopIssuing cancels Run's issuing context; nil until Run starts.
	// stopEarly notes a StopIssuing that came before Run. Both under gate.
	stopIssuing context.CancelFunc
	stopEarly   bool
	// issuing is done once issuing has stopped (set by begin, before any
	// request): a request backing off for a retry wakes on it.
	issuing context.Context

	// retry is Config.Retry with defaults; budget bounds its retries.
	retry  RetryPolicy
	budget *retryBudget

	// reqCtx parents every request. It is separate from issuing so that a
	// graceful stop (ctx done, StopIssuing, the end of Duration) lets
	// in-flight requests finish; Abort or the end of Grace cancels it.
	reqCtx    context.Context
	abortReqs context.CancelFunc

	// graphs are Config.Graphs and Config.Chains, ready to run, by class.
	graphs map[string]*graphPlan
}

// New validates cfg and returns an engine ready to Run.
func New(cfg Config) (*Engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Grace == 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Clock == nil {
		cfg.Clock = PreciseClock{}
	}
	e := &Engine{cfg: cfg, clock: cfg.Clock, startedCh: make(chan struct{}), retry: cfg.Retry.withDefaults(),
		allIssued: make(chan struct{})}
	e.budget = newRetryBudget(&e.retry)
	e.graphs = cfg.graphPlans()
	e.reqCtx, e.abortReqs = context.WithCancel(context.Background())
	return e, nil
}

// Started returns the phase's time zero once Run has begun; every offset in
// the results is measured from it on the monotonic clock. It blocks until
// Run has started.
func (e *Engine) Started() time.Time {
	<-e.startedCh
	return e.start
}

// InFlight is the number of requests currently being sent or read.
func (e *Engine) InFlight() int { return int(e.inFlight.Load()) }

// Issued is the number of requests started so far.
func (e *Engine) Issued() int { return int(e.issued.Load()) }

// StoppedIssuingUS is the offset at which issuing stopped, or 0 while the
// phase is still issuing. A phase that ran its full Duration reports
// exactly Duration; one stopped by StopIssuing, Abort or Run's ctx reports
// that moment; one that spent its Requests reports when the last was
// issued (an open loop) or answered (a closed loop).
func (e *Engine) StoppedIssuingUS() int64 { return e.stoppedAt.Load() }

// IssuingDone is closed once the phase has stopped issuing (Duration
// passed, StopIssuing, Abort, Run's ctx, a spent request budget): from
// then on no request is admitted, and the next phase of a load change may
// start while this one's last requests finish. It blocks until Run has
// started.
func (e *Engine) IssuingDone() <-chan struct{} {
	<-e.startedCh
	return e.issuing.Done()
}

// Claimed is how many request indices the phase has handed out. Once
// IssuingDone is closed, every request the phase sends has an index below
// it, so the next phase can number its own after them while these still
// run.
func (e *Engine) Claimed() uint64 { return e.nextIndex.Load() }

// StopIssuing stops the phase issuing now, as the end of Duration would:
// once it returns no request is admitted (Issued is final), and in-flight
// ones get Grace to finish. It may be called at any time, from any
// goroutine, more than once; called before Run, Run issues nothing.
func (e *Engine) StopIssuing() {
	e.gate.Lock()
	defer e.gate.Unlock()
	if e.stopIssuing == nil {
		e.stopEarly = true
		return
	}
	e.markStopped(e.sinceStartUS())
	e.stopIssuing()
}

// Abort stops issuing (StopIssuing) and cancels every in-flight request at
// once (a second Ctrl-C); they are recorded as canceled and Run returns
// as soon as their results are delivered.
func (e *Engine) Abort() {
	e.StopIssuing()
	e.abortReqs()
}

// Run issues requests until the duration or request count is reached,
// StopIssuing or Abort is called, or ctx is done (a graceful stop: no new
// requests, in-flight ones get Grace to finish, then are canceled). Every
// request produces exactly one Result on out, which Run closes when the
// last one has been sent. The caller must keep draining out. Run returns
// only once every goroutine it started has ended.
func (e *Engine) Run(ctx context.Context, out chan<- *record.Result) error {
	defer close(out)
	defer e.closeChains()
	defer e.abortReqs() // nothing is in flight by now; releases reqCtx

	issueCtx, stop := context.WithCancel(ctx)
	defer stop()
	e.begin(issueCtx, stop)

	var timers sync.WaitGroup
	if e.cfg.Duration > 0 {
		timers.Go(func() { e.stopAtDuration(issueCtx) })
	}
	var requests sync.WaitGroup
	e.cfg.Shape.Run(&Phase{e: e, issueCtx: issueCtx, out: out, requests: &requests})
	e.markStopped(e.sinceStartUS())
	stop() // ends the duration timer when the phase ended by itself
	e.awaitDrain(&requests)
	timers.Wait()
	return nil
}

// begin sets the phase's time zero and makes it stoppable.
func (e *Engine) begin(issueCtx context.Context, stop context.CancelFunc) {
	e.gate.Lock()
	defer e.gate.Unlock()
	e.start = e.clock.Now()
	if o := e.cfg.Origin; !o.IsZero() && o.Before(e.start) {
		e.start = o
	}
	e.stopIssuing = stop
	e.issuing = issueCtx
	if e.stopEarly {
		e.markStopped(0)
		stop()
	}
	close(e.startedCh)
}

// stopAtDuration stops issuing when Duration has passed, reporting exactly
// Duration as the stop, unless issuing ended first.
func (e *Engine) stopAtDuration(issueCtx context.Context) {
	if !e.clock.SleepUntil(issueCtx, e.start.Add(e.cfg.Duration)) {
		return
	}
	e.gate.Lock()
	defer e.gate.Unlock()
	e.markStopped(e.cfg.Duration.Microseconds())
	e.stopIssuing()
}

// admit counts a request as issued, unless issuing has stopped; a request
// not admitted is never sent.
func (e *Engine) admit(issueCtx context.Context) bool {
	e.gate.RLock()
	defer e.gate.RUnlock()
	if issueCtx.Err() != nil {
		return false
	}
	if n := e.issued.Add(1); e.cfg.Requests > 0 && n == int64(e.cfg.Requests) {
		e.allIssuedOnce.Do(func() { close(e.allIssued) })
	}
	return true
}

// markStopped records when issuing stopped (once); 0 counts as 1 µs so
// that a stopped phase never reads as still issuing.
func (e *Engine) markStopped(us int64) {
	e.stoppedAt.CompareAndSwap(0, max(us, 1))
}

// sinceStartUS is now on the phase clock.
func (e *Engine) sinceStartUS() int64 { return e.clock.Now().Sub(e.start).Microseconds() }

// awaitDrain waits for in-flight requests, canceling them after Grace.
func (e *Engine) awaitDrain(requests *sync.WaitGroup) {
	drained, done := context.WithCancel(context.Background())
	defer done()
	var waiter sync.WaitGroup
	waiter.Go(func() { requests.Wait(); done() })
	if e.clock.SleepUntil(drained, e.clock.Now().Add(e.cfg.Grace)) {
		e.abortReqs()
	}
	waiter.Wait()
}

// claim reserves the next request index, or returns false when the request
// budget is spent.
func (e *Engine) claim() (uint64, bool) {
	i := e.nextIndex.Add(1) - 1
	if e.cfg.Requests > 0 && i >= uint64(e.cfg.Requests) {
		return 0, false
	}
	return i, true
}

// offset converts an instant to microseconds since the phase start.
func (e *Engine) offset(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Sub(e.start).Microseconds()
}

// prepared is a request rendered ahead of its due time.
type prepared struct {
	spec workload.Spec
	req  *protocol.Request
	// sess is the session that built spec, handed the reply when spec
	// asks for it (threadReply); nil for a request without one.
	sess workload.Session
}

func (e *Engine) prepare(i uint64) (prepared, error) {
	spec := e.cfg.Source.Spec(i)
	e.cfg.Prefixes.mark(&spec)
	if e.graphs[spec.Class] != nil {
		return prepared{spec: spec}, nil // each node renders its own calls
	}
	req, err := e.cfg.Render(spec)
	if err != nil {
		return prepared{}, fmt.Errorf("rendering request %d: %w", i, err)
	}
	return prepared{spec: spec, req: req}, nil
}

// newRNG gives each closed-loop user its own deterministic stream.
func newRNG(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))
}
