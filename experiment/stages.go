package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/workload"
)

// StageOptions tune what a staged run judges and counts. The zero value
// uses every default.
type StageOptions struct {
	// Criteria decide each step's validity (analyze.Judge).
	Criteria analyze.Criteria
	// StopFailureRate, when above 0, ends the run after the first stage
	// whose failure rate exceeds it: a sweep stops where errors start.
	StopFailureRate float64
	// Knee, when set, runs knee detection over the constant stages of
	// KneeMode and stores it in summary.json's knee.
	Knee     *analyze.KneeOptions
	KneeMode string
}

// RunStaged runs the plan's load.stages, one engine phase per stage, into
// one run directory: records carry their stage in step, and summary.json
// gets the whole run's figures plus one entry per stage in steps.
func RunStaged(ctx context.Context, p *plan.Plan, opts Options, so StageOptions) (*Outcome, error) {
	stages, err := ParseStages(p.Load.Stages, p.Load.Mode())
	if err != nil {
		return nil, err
	}
	return runStages(ctx, p, stages, opts, so)
}

// runStages is RunStaged for stages already built (a sweep builds its own).
func runStages(ctx context.Context, p *plan.Plan, stages []Stage, opts Options, so StageOptions) (*Outcome, error) {
	if len(stages) == 0 {
		return nil, errors.New("load.stages: no stage to run")
	}
	for _, st := range stages {
		if err := checkWarmup(p, st.Duration); err != nil {
			return nil, fmt.Errorf("%w (%s)", err, st.describe())
		}
	}
	return runDriven(ctx, p, opts, so, func(ctx context.Context, r *stagedRun) error { return r.run(ctx, stages) }, nil)
}

// checkWarmup: each stage discards its own warm-up, so the warm-up must be
// shorter than every stage.
func checkWarmup(p *plan.Plan, stage time.Duration) error {
	if p.Load.Warmup >= stage {
		return fmt.Errorf("load.warmup %s: each stage discards its own warm-up, so it must be shorter than every stage", p.Load.Warmup)
	}
	return nil
}

// runDriven sets up the run directory and lets drive run stages into it
// (runStage, one at a time); finish, when set, adds to the summary before
// it is written.
func runDriven(ctx context.Context, p *plan.Plan, opts Options, so StageOptions,
	drive func(context.Context, *stagedRun) error, finish func(*record.Summary)) (*Outcome, error) {
	if err := checkObserve(p); err != nil {
		return nil, err
	}
	env := opts.Env.withDefaults()
	client, err := newClient(p, env)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	dir, err := prepareRunDir(p, opts.Version)
	if err != nil {
		return nil, err
	}
	files, err := openRunFiles(dir)
	if err != nil {
		return nil, err
	}
	defer files.close()
	r := &stagedRun{p: p, client: client, opts: opts, so: so, dir: dir, files: files, rec: newRecorder(files, p), inputs: newWorkloadFiles()}
	r.rec.onResult = opts.OnResult
	if opts.InFlight != nil {
		opts.InFlight(r.inFlight)
	}
	if err := drive(ctx, r); err != nil {
		return nil, err
	}
	s, telErr := r.summary(ctx.Err() != nil)
	if finish != nil {
		finish(s)
	}
	return writeOutcome(dir, files, p, s, errors.Join(r.rec.err, telErr))
}

// stagedRun is the state of a staged run while it runs.
type stagedRun struct {
	p      *plan.Plan
	client protocol.Client
	opts   Options
	so     StageOptions
	dir    string
	files  *runFiles
	rec    *recorder
	// inputs are the datasets and tokenizer every stage reads, once a run.
	inputs *workloadFiles

	// onResult, when set, sees every record of the stage running (a
	// capacity search tallies its SLOs with it).
	onResult func(*record.Result)
	// tel samples the server, GPUs and client from the first stage's start.
	tel *telemetry
	// current is the running stage's engine, for live in-flight counts.
	current atomic.Pointer[engine.Engine]

	start     time.Time // the run clock's zero: the first stage's start
	nextID    uint64    // first record ID of the next stage, so IDs stay unique
	steps     []record.Step
	measureUS int64 // the last stage's issuing stop
	endUS     int64
}

// run runs every stage in turn; a canceled ctx stops after the current one.
func (r *stagedRun) run(ctx context.Context, stages []Stage) error {
	for i, st := range stages {
		if ctx.Err() != nil {
			break
		}
		step, err := r.runStage(ctx, i+1, st)
		if err != nil {
			return fmt.Errorf("stage %d (%s): %w", i+1, st.describe(), err)
		}
		r.steps = append(r.steps, step)
		if f := r.so.StopFailureRate; f > 0 && step.FailureRate > f {
			break
		}
	}
	return nil
}

// summary is the whole run's aggregate with the steps attached (and the
// server/GPU telemetry, whose error it returns).
func (r *stagedRun) summary(interrupted bool) (*record.Summary, error) {
	var samples []observe.Sample
	var telErr error
	if r.tel != nil {
		samples, telErr = r.tel.stop()
	}
	info := record.RunInfo{Name: r.p.Name, Started: r.start.UTC(), Mode: r.p.Load.Mode(),
		EndUS: r.endUS, MeasureEndUS: r.measureUS, Interrupted: interrupted}
	if len(r.steps) > 0 {
		info.WarmupEndUS = secondsToUS(r.steps[0].StartS) + r.p.Load.Warmup.Microseconds()
	}
	r.writeClosingEvents(info)
	s := r.rec.summary(info)
	observe.Summarize(samples, info, s)
	s.Steps = r.steps
	if r.so.Knee != nil {
		s.Knee = r.knee()
	}
	return s, telErr
}

// knee runs knee detection over the steps of the knee's mode (a rate
// sweep's closed-loop baseline is in another unit).
func (r *stagedRun) knee() *record.Knee {
	var steps []record.Step
	for _, st := range r.steps {
		if st.Mode == r.so.KneeMode {
			steps = append(steps, st)
		}
	}
	k, err := analyze.FindKnee(steps, *r.so.Knee)
	if err != nil {
		k.Reason = err.Error()
	}
	k.Mode = r.so.KneeMode
	return &k
}

// writeClosingEvents writes the run-level marks Rebuild reads; stage
// boundaries are notes, so the first warm-up end stays the run's.
func (r *stagedRun) writeClosingEvents(info record.RunInfo) {
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	r.rec.series.Flush()
	events := []record.Event{}
	if r.p.Load.Warmup > 0 {
		events = append(events, record.Event{TimeUS: info.WarmupEndUS, Kind: record.EventWarmupEnd})
	}
	events = append(events, record.Event{TimeUS: info.MeasureEndUS, Kind: record.EventMeasureEnd})
	if info.Interrupted {
		events = append(events, record.Event{TimeUS: info.EndUS, Kind: record.EventInterrupted, Message: "stopped by signal"})
	}
	events = append(events, record.Event{TimeUS: info.EndUS, Kind: record.EventRunEnd})
	for _, e := range events {
		r.rec.keep(r.files.events.Write(e))
	}
}

// inFlight is the running stage's requests in flight (0 between stages).
func (r *stagedRun) inFlight() int {
	if eng := r.current.Load(); eng != nil {
		return eng.InFlight()
	}
	return 0
}

func secondsToUS(s float64) int64 { return int64(math.Round(s * 1e6)) }

// stageConfig is the engine phase of one stage.
func (r *stagedRun) stageConfig(index int, st Stage) (engine.Config, error) {
	cfg, err := engineConfig(r.p, r.client, r.inputs)
	if err != nil {
		return engine.Config{}, err
	}
	cfg.Source = offsetSource{src: cfg.Source, base: r.nextID}
	cfg.Duration, cfg.Requests, cfg.Warmup = st.Duration, 0, r.p.Load.Warmup
	cfg.Seed = r.p.Workload.Seed + uint64(index)
	if st.Mode == record.ModeClosed {
		cfg.Arrivals, cfg.Concurrency = nil, int(math.Max(st.From, st.Target))
		if st.Kind == record.StepRamp {
			cfg.Users = rampUsers(st.From, st.Target, st.Duration)
		}
		return cfg, nil
	}
	cfg.Concurrency, cfg.Think = 0, nil
	if st.Kind == record.StepRamp {
		cfg.Arrivals = &rampArrivals{r0: st.From, r1: st.Target, d: st.Duration}
		return cfg, nil
	}
	arr, err := schedule.NewArrivals(arrivalKind(r.p), st.Target, r.p.Load.Burstiness, cfg.Seed)
	if err != nil {
		return engine.Config{}, fmt.Errorf("load.arrival: %w", err)
	}
	cfg.Arrivals = arr
	return cfg, nil
}

// arrivalKind is the plan's arrival process; a closed-loop plan whose
// sweep runs rates gets Poisson, the open-loop default.
func arrivalKind(p *plan.Plan) string {
	if p.Load.Arrival != "" {
		return p.Load.Arrival
	}
	return schedule.Poisson
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
