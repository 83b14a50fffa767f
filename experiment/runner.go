package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/summary"
	"github.com/inferload/inferload/workload"
)

// runner is one run directory being written. Every command goes through
// it: a single-phase run is one stage, a staged run, sweep or capacity
// search is several, a soak is one long stage. It starts the engine of
// each stage, records its results, closes the run with the same events
// whatever ran, and ends with Assemble's summary: fed with each record as
// it was written (summary.FinishLive), and otherwise only what the directory
// holds, so the live summary and a rebuild are one.
type runner struct {
	p      *plan.Plan
	design summary.Design
	opts   Options
	client protocol.Client
	// inputs are the datasets and tokenizer every stage reads, once a run.
	inputs *workloadFiles
	// seg is the plan's segment: the part of the run this process sends.
	seg   schedule.Segment
	dir   string
	files *runFiles
	rec   *recorder
	// tel samples the server, GPUs and client from the first stage's start.
	tel *telemetry
	// spans receives the server's OTLP spans; nil unless the run listens.
	spans *spanReceiver
	// current is the running stage's engine, for live in-flight counts,
	// and draining the previous stage's while its last requests finish
	// after a load change.
	current, draining atomic.Pointer[engine.Engine]
	// collectMu serialises the records of two stages collected at once
	// (collect), and guards nextID.
	collectMu sync.Mutex

	start     time.Time // the run clock's zero: the first stage's start
	nextID    uint64    // first record ID of the next stage, so IDs stay unique
	stages    int       // stages run so far
	measureUS int64     // the last stage's issuing stop
	endUS     int64
	// stageIssuedUS is how long the last stage issued requests.
	stageIssuedUS int64
}

// ErrInterrupted is returned when a signal stopped a run before it sent
// anything.
var ErrInterrupted = errors.New("interrupted")

// driver runs an experiment's stages, one runStage at a time.
type driver func(context.Context, *runner) error

// execute runs an experiment into a new run directory: prepare checks
// what it can before anything is written (the engine phase of its first
// stage) and returns the driver; the directory is then created, the
// driver runs the stages, and the directory is finished: closing events,
// logs flushed, then summary.json and report.html from Assemble.
// Canceling ctx is a graceful stop; the directory is still finished.
func execute(ctx context.Context, p *plan.Plan, opts Options, d summary.Design, prepare func(*runner) (driver, error)) (*Outcome, error) {
	if err := checkObserve(p); err != nil {
		return nil, err
	}
	if err := checkNames(p); err != nil {
		return nil, err
	}
	opts.Env = opts.Env.within(ctx) // a signal stops the reads of the plan's files
	client, err := newClient(p, opts.Env.withDefaults())
	if err != nil {
		return nil, &PlanError{err} // a key or CA file the plan names, unreadable or wrong
	}
	defer client.Close()
	seg, err := schedule.ParseSegment(p.Load.Segment)
	if err != nil {
		return nil, fmt.Errorf("load.segment: %w", err)
	}
	if p, err = withRunSalt(p, seg, opts); err != nil {
		return nil, &PlanError{err}
	}
	r := &runner{p: p, design: d, opts: opts, client: client, inputs: newWorkloadFiles(ctx), seg: seg}
	drive, err := prepare(r)
	if err != nil {
		// What the plan names cannot be used as it is: a dataset, trace
		// or tokenizer file, or a load the engine refuses. Bad input.
		return nil, &PlanError{err}
	}
	// The OTLP port is taken before anything is written, so a port in use
	// fails the run at once; the receiver serves on it from the first stage.
	ln, err := otlpListener(p, opts)
	if err != nil {
		return nil, err
	}
	if ln != nil {
		defer ln.Close() // a no-op once the receiver closed it
	}
	if err := preflight(ctx, p, client, r.inputs, opts.Env.withDefaults()); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w during the pre-flight probe: no request was measured", ErrInterrupted)
		}
		return nil, err
	}
	// The probe's connection is closed, so the run's own requests open
	// every connection they use and summary.json's connections count
	// them all (a kept connection would make one request look reused).
	client.Close()
	// A signal during the environment probes (the /v1/models request)
	// cancels them at once; nothing is measured after it.
	if r.dir, err = prepareRunDir(ctx, p, opts, d); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w during start-up: no request was sent (%s holds the plan and environment only)", ErrInterrupted, r.dir)
	}
	if r.files, err = openRunFiles(r.dir, opts.openLog); err != nil {
		return nil, err
	}
	defer r.files.close()
	if ln != nil {
		if r.spans, err = startSpans(r, ln); err != nil {
			return nil, err
		}
	}
	fold, err := summary.NewLive(r.dir, ln != nil)
	if err != nil {
		return nil, err
	}
	r.rec = newRecorder(r.files, p, opts.clock(), fold)
	r.rec.onResult = opts.OnResult
	r.rec.onWriteFail = r.stopIssuing
	if opts.OnWindow != nil {
		// Windows come after the first stage started r.start.
		r.rec.onWindow = func(w record.Window) { opts.OnWindow(r.start, w) }
	}
	if opts.InFlight != nil {
		opts.InFlight(r.inFlight)
	}
	driveErr := drive(ctx, r)
	r.closeSpans(ctx)
	closeErr := r.close(ctx.Err() != nil)
	if r.rec.failure() != nil || (driveErr == nil && closeErr != nil) {
		// The files are missing records: the summary cannot come from
		// them, so it comes from memory, and the run ends as a failure.
		// Issuing stopped at the failed write: the run ended early, as
		// its interrupted event says.
		wf := r.writeFailure(cmp.Or(r.rec.failure(), closeErr), ctx.Err() != nil || r.rec.failure() != nil)
		return &Outcome{Dir: r.dir, Summary: wf.Summary}, wf
	}
	if driveErr != nil {
		return nil, driveErr
	}
	if r.stages == 0 {
		return nil, fmt.Errorf("%s: no stage ran", r.dir)
	}
	rb, err := summary.FinishLive(r.dir, fold)
	if err != nil {
		return nil, err
	}
	return &Outcome{Dir: r.dir, Summary: rb.Summary}, nil
}

// closeSpans waits for the spans still to come (not after a stop by
// signal) and closes the receiver; a failure to keep them is the run's
// write failure.
func (r *runner) closeSpans(ctx context.Context) {
	if r.spans == nil {
		return
	}
	r.spans.wait(ctx, cmp.Or(r.p.Observe.OTLPWait, plan.DefaultOTLPWait))
	r.rec.keep(r.spans.close(r.files.events, r.endUS))
}

// stopIssuing stops the running stage issuing (after a failed write).
func (r *runner) stopIssuing() {
	if eng := r.current.Load(); eng != nil {
		eng.StopIssuing()
	}
}

// inFlight is the requests in flight of the running stage and of the
// one before while it finishes (0 between stages).
func (r *runner) inFlight() int {
	n := 0
	for _, eng := range []*engine.Engine{r.current.Load(), r.draining.Load()} {
		if eng != nil {
			n += eng.InFlight()
		}
	}
	return n
}

// stage is one stage to run: its load (Index 0 for a single-phase run,
// whose records carry no step) and the engine phase that applies it.
type stage struct {
	Index int
	Load  schedule.Stage
	cfg   engine.Config
	// created, when set, sees the stage's engine before it runs (a
	// Steering that may stop it).
	created func(*engine.Engine)
}

// runStage runs one stage as its own engine phase, to its end. Its
// records are moved onto the run clock (the first stage's start),
// numbered after the previous stages' and tagged with the stage's index;
// a staged run's stage ends with a stage_end event and returns its step,
// computed from its records exactly as Assemble computes it, with what
// they folded into.
func (r *runner) runStage(ctx context.Context, st stage) (record.Step, *summary.StepAcc, error) {
	ru, err := r.launch(ctx, st, nil)
	if err != nil {
		return record.Step{}, nil, err
	}
	return r.finish(ru)
}

// launch starts stage st, taking over from prev (handOver) when prev is
// set, and returns once its clock has started; its records are collected
// in the background until finish.
func (r *runner) launch(ctx context.Context, st stage, prev *running) (*running, error) {
	if err := r.rec.failure(); err != nil { // a write failed in an earlier stage: run no more
		return nil, err
	}
	st.cfg.Clock = r.opts.clock()
	base := r.stageBase(st.Index)
	if r.p.Target.TracesContext() {
		// The record's own id: run-wide within the segment, after the
		// previous stages' (as collect numbers it).
		seg := r.seg
		st.cfg.TraceRun, st.cfg.TraceIDOf = r.opts.traceRun(r.dir), func(i uint64) uint64 { return seg.Global(i) + base }
	}
	if err := applySegment(&st.cfg, r.seg); err != nil {
		return nil, err
	}
	r.handOver(&st.cfg, st, prev)
	eng, err := engine.New(st.cfg)
	if err != nil {
		return nil, err
	}
	if st.created != nil {
		st.created(eng)
	}
	if err := r.awaitStart(ctx); err != nil {
		return nil, err
	}
	out := make(chan *record.Result, 1024)
	engineDone := make(chan struct{})
	go func() { defer close(engineDone); _ = eng.Run(ctx, out) }()
	started := eng.Started()
	if err := r.markStart(ctx, started, st); err != nil {
		// The engine is joined: its requests canceled, what it still
		// emits drained.
		eng.Abort()
		for range out {
		}
		<-engineDone
		return nil, err
	}
	r.stages++
	if prev != nil {
		r.draining.Store(prev.eng)
	}
	r.current.Store(eng)
	ru := &running{st: st, eng: eng, base: base, offUS: started.Sub(r.start).Microseconds(), collected: make(chan struct{}),
		stopAbort: forwardAbort(r.opts.Abort, eng)}
	if c, ok := st.cfg.Shape.(engine.ClosedLoop); ok {
		ru.ends = c.Ends
	}
	ru.stopProgress = once(startProgress(r.opts, r.progressLoad(st), eng, r.rec, r.start))
	// Only a stage of a staged run is a step; a single run's figures come
	// from the whole run (Assemble), so it folds nothing per stage.
	if st.Index > 0 {
		ru.acc = summary.NewStepAcc(r.p, r.design)
	}
	go r.collect(ctx, ru, out, engineDone)
	return ru, nil
}

// finish waits for ru's last record and ends the stage: its stage_end
// event (a staged run's) and its step. Stages finish in the order they
// started.
func (r *runner) finish(ru *running) (record.Step, *summary.StepAcc, error) {
	<-ru.collected
	ru.stopProgress()
	ru.stopAbort()
	r.current.CompareAndSwap(ru.eng, nil)
	r.draining.CompareAndSwap(ru.eng, nil)
	r.endUS = ru.endUS
	r.stageIssuedUS = ru.eng.StoppedIssuingUS()
	r.measureUS = ru.offUS + r.stageIssuedUS
	if ru.st.Index == 0 {
		return record.Step{}, nil, nil
	}
	st := ru.st
	mark := stageMark(st.Index, st.Load, r.p.Load.Warmup, ru.offUS, r.measureUS)
	mark.Interrupted = ru.interrupted
	if err := r.files.events.Write(record.Event{TimeUS: r.endUS, Kind: record.EventStageEnd, Stage: &mark}); err != nil {
		r.rec.keep(err)
		return record.Step{}, nil, err
	}
	// A killed sweep keeps every step whose end reached the disk.
	if err := r.files.events.Flush(); err != nil {
		r.rec.keep(err)
		return record.Step{}, nil, err
	}
	mark.EndUS = r.endUS
	step, err := summary.BuildStep(ru.acc, mark, r.p, r.design)
	return step, ru.acc, err
}

// stageMark is stage index's marks on the run clock, as its stage_end
// event carries them: it started at startUS with load, its warm-up ended
// warmup later, and it stopped issuing at measureEndUS.
func stageMark(index int, load schedule.Stage, warmup time.Duration, startUS, measureEndUS int64) record.StageMark {
	return record.StageMark{Index: index, Kind: load.Kind, Mode: load.Mode, Target: load.Target, From: load.From,
		StartUS: startUS, WarmupEndUS: startUS + warmup.Microseconds(), MeasureEndUS: measureEndUS}
}

// stageBase is the first request number of stage index: after the
// previous stages' requests in one process, a fixed per-stage base in a
// segmented run (segmentedStageBase).
func (r *runner) stageBase(index int) uint64 {
	if r.seg.Whole() {
		r.collectMu.Lock()
		defer r.collectMu.Unlock()
		return r.nextID
	}
	return segmentedStageBase(index)
}

// awaitStart holds the first stage until Options.StartAt, the instant all
// segments of a run start together. A segment that is already more than
// startSlack late cannot start with the others and says so.
func (r *runner) awaitStart(ctx context.Context) error {
	at := r.opts.StartAt
	if at.IsZero() || !r.start.IsZero() {
		return nil
	}
	clock := r.opts.clock()
	if late := clock.Now().Sub(at); late > startSlack {
		return fmt.Errorf("start-at %s passed %s ago: this process cannot start with the others", at.UTC().Format(time.RFC3339Nano), late.Round(time.Millisecond))
	}
	if !clock.SleepUntil(ctx, at) {
		return fmt.Errorf("stopped while waiting for start-at %s", at.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// startSlack is how late a segment may start and still count as starting
// with the others: the schedule is absolute, so it catches up as queue
// delay (and late requests) that the run reports.
const startSlack = time.Second

// progressLoad is the plan as the progress line shows a stage: its own
// duration, no request count, for a staged run's stage.
func (r *runner) progressLoad(st stage) *plan.Plan {
	if st.Index == 0 {
		return r.p
	}
	p := *r.p
	p.Load.Duration, p.Load.Requests = st.Load.Duration, 0
	return &p
}

// shift moves a record from its stage's clock onto the run clock, and
// its ID (and its conversation's, the ID of a first turn) into the run's.
func shift(res *record.Result, offUS int64, base uint64, index int) {
	res.ID += base
	if res.Turn > 0 {
		res.Session += base
	}
	res.Step = index
	res.Shift(offUS)
}

// markStart starts the run clock with the first stage (run_start, the
// telemetry, the plan's notes) and notes a staged run's every stage start.
func (r *runner) markStart(ctx context.Context, started time.Time, st stage) error {
	if r.start.IsZero() {
		r.start = started
		if err := r.files.events.Write(record.Event{Kind: record.EventRunStart, Message: started.UTC().Format(time.RFC3339Nano)}); err != nil {
			return err
		}
		tel, err := startTelemetry(ctx, r.p, r.dir, started, r.files.events, r.rec.takePacerLag, r.opts.OnSample)
		if err != nil {
			return err
		}
		r.tel = tel
		for _, e := range planNotes(r.p) {
			r.rec.keep(r.files.events.Write(e))
		}
		// The clock's zero reaches the disk at once: without it a killed
		// run, or a segment whose machine is lost, cannot be placed on a
		// merged clock.
		r.rec.keep(r.files.events.Flush())
		if r.opts.Steering != nil {
			r.opts.Steering.attach(r)
		}
		if r.opts.Started != nil {
			r.opts.Started(r.dir)
		}
	}
	if st.Index == 0 {
		return nil
	}
	msg := fmt.Sprintf("stage %d start: %s", st.Index, st.Load.Describe())
	return r.files.events.Write(record.Event{TimeUS: started.Sub(r.start).Microseconds(), Kind: record.EventNote, Message: msg})
}

// close ends the run: telemetry stopped, the closing events written (the
// run-level marks Assemble reads) and every log flushed and closed. The
// first error met while the run went on is returned now.
func (r *runner) close(interrupted bool) error {
	if r.opts.Steering != nil {
		r.opts.Steering.detach()
	}
	var telErr error
	if r.tel != nil {
		_, telErr = r.tel.stop()
	}
	if !r.start.IsZero() {
		r.rec.flushSeries()
		r.rec.mu.Lock()
		finished := r.rec.finished
		r.rec.mu.Unlock()
		stop := ""
		switch {
		case r.rec.failure() != nil:
			// A full disk may still take these few bytes (the events
			// file's last block has room): then a rebuild knows the run
			// stopped early and how many records it lost.
			stop = fmt.Sprintf("issuing stopped: the run directory could not be written: %v", r.rec.failure())
		case interrupted:
			stop = "stopped by signal"
		}
		for _, e := range closingEvents(r.p, r.runWarmupEndUS(), r.measureUS, r.endUS, stop, finished) {
			r.rec.keep(r.files.events.Write(e))
		}
	}
	return errors.Join(r.rec.failure(), telErr, r.files.close())
}

// runWarmupEndUS is where the run's measured window starts: the first
// stage's warm-up end (each later stage discards its own warm-up, which
// the run's window keeps).
func (r *runner) runWarmupEndUS() int64 {
	return min(r.p.Load.Warmup.Microseconds(), r.endUS)
}

// closingEvents are the run-level marks of events.jsonl, in order: an
// interrupted event when stop says why the run stopped early, and run_end
// with the number of records the run finished.
func closingEvents(p *plan.Plan, warmupEndUS, measureEndUS, endUS int64, stop string, records int64) []record.Event {
	var events []record.Event
	if p.Load.Warmup > 0 {
		events = append(events, record.Event{TimeUS: warmupEndUS, Kind: record.EventWarmupEnd})
	}
	events = append(events, record.Event{TimeUS: measureEndUS, Kind: record.EventMeasureEnd})
	if stop != "" {
		events = append(events, record.Event{TimeUS: endUS, Kind: record.EventInterrupted, Message: stop})
	}
	return append(events, record.Event{TimeUS: endUS, Kind: record.EventRunEnd, Records: records})
}

// offsetSource numbers a stage's requests after the previous stages', so
// every stage sends new prompts (a server's prefix cache cannot replay an
// earlier stage) and record IDs stay unique across the run.
type offsetSource struct {
	src  engine.Source
	base uint64
}

// Spec is the underlying source's request base+i.
func (o offsetSource) Spec(i uint64) workload.Spec { return o.src.Spec(o.base + i) }

// Session is the underlying source's stream for user base+user, so a
// stage's users hold conversations (without it every stage after the
// first sent single requests) and new ones, as Spec sends new prompts.
func (o offsetSource) Session(user uint64) workload.Session {
	return sessionOf(o.src, o.base+user)
}

// sessionOf is src's stream of requests for user; nil when src has none
// (the engine then asks Spec for each request).
func sessionOf(src engine.Source, user uint64) workload.Session {
	if s, ok := src.(interface {
		Session(user uint64) workload.Session
	}); ok {
		return s.Session(user)
	}
	return nil
}
