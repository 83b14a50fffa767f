package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/summary"
)

// Options are a run's connections to the outside world, injected so the
// library never reaches for the process's own (the CLI passes them). The
// zero value runs silently, with no environment variables, on the real
// clock.
type Options struct {
	Env Env
	// Clock is what the run reads the time from and its engines wait
	// with; nil means engine.PreciseClock.
	Clock engine.Clock
	// StartAt, when set, holds the first stage until that instant, so the
	// segments of a run spread over several machines start together
	// (load.segment); a process more than a second late refuses to start.
	StartAt time.Time
	// Progress receives the live progress line; nil disables it.
	Progress io.Writer
	// TTY redraws one progress line in place instead of printing a plain
	// line every few seconds.
	TTY bool
	// Version is the inferload version written to env.json.
	Version string
	// ProgressEvery is the progress refresh period (default 500ms).
	ProgressEvery time.Duration
	// Abort, when closed, cancels in-flight requests at once (a second
	// Ctrl-C); they are recorded as canceled.
	Abort <-chan struct{}
	// TraceRun, when set, names the run in its requests' trace ids
	// (record.TraceID) instead of the run directory's name: the segments
	// of one distributed run share it (the CLI uses the plan's name and
	// the common start), so with their run-wide request ids the merged
	// run's trace ids are unique and recomputable from its env.json.
	TraceRun string
	// Started is called once the phase's clock has started, with the run
	// directory; the CLI uses it to tell the user where results go.
	Started func(dir string)
	// OnResult, when set, is called with every finished request on the
	// collector goroutine, right after it was written to records.jsonl:
	// the feed of live exporters (live.Metrics.Observe). It must be
	// quick, since it holds up recording, and must not modify the result.
	OnResult func(*record.Result)
	// InFlight, when set, is called once the engine has started with a
	// function that reports its requests in flight, for live exporters.
	InFlight func(current func() int)
	// OnWindow, when set, is called with each per-second window as it is
	// written to series.jsonl, and the run clock's start (the window's
	// t_s counts from it): the feed of live series sinks. Same rules as
	// OnResult.
	OnWindow func(started time.Time, w record.Window)
	// OnSample, when set, is called with each telemetry sample (server,
	// GPU, client) as it is written to telemetry.jsonl, on the sampler's
	// goroutine. Same rules as OnResult.
	OnSample func(observe.Sample)
	// Steering, when set, takes notes and load changes while the run
	// runs (the live UI). A run whose load it can steer is recorded as
	// stages; see Steering.
	Steering *Steering

	// OTLPListener, when set, is the socket the run's OTLP receiver
	// serves on instead of listening on observe.otlp_listen (a test hands
	// over a port it already holds, so a server can be pointed at it
	// before the run starts).
	OTLPListener net.Listener
	// OTLPListening, when set, is told the receiver's address once it
	// listens, before the first request.
	OTLPListening func(addr string)

	// openLog opens one of the run's logs (tests point records.jsonl at
	// /dev/full); nil means rundir.NewJSONLWriter.
	openLog func(path string) (*rundir.JSONLWriter, error)
}

// clock is the run's clock.
func (o Options) clock() engine.Clock {
	if o.Clock == nil {
		return engine.PreciseClock{}
	}
	return o.Clock
}

// Outcome is what a finished (or interrupted) run left behind.
type Outcome struct {
	Dir     string
	Summary *record.Summary
}

// Run executes the plan's phase against its target and writes the run
// directory. Canceling ctx is a graceful stop (Ctrl-C): issuing stops,
// in-flight requests get the plan's grace, and everything is still written.
// An error means the run could not be set up or its files not written; what
// the target does is never an error, only data.
func Run(ctx context.Context, p *plan.Plan, opts Options) (*Outcome, error) {
	if len(p.Load.Stages) > 0 {
		return RunStaged(ctx, p, opts, StageOptions{})
	}
	if opts.Steering != nil && steerable(p) {
		return runSteered(ctx, p, opts, opts.Steering)
	}
	return runSingle(ctx, p, opts, summary.Design{Kind: summary.KindRun})
}

// runSingle runs the plan's one phase under design d (a run or a soak).
func runSingle(ctx context.Context, p *plan.Plan, opts Options, d summary.Design) (*Outcome, error) {
	return execute(ctx, p, opts, d, func(r *runner) (driver, error) {
		cfg, err := engineConfig(r.p, r.client, r.inputs) // r.p: the plan with this run's salt
		if err != nil {
			return nil, err
		}
		if _, err := engine.New(cfg); err != nil { // the phase is checked before the directory exists
			return nil, err
		}
		printDatasetProfiles(opts.Progress, p, r.inputs)
		return func(ctx context.Context, r *runner) error {
			_, _, err := r.runStage(ctx, stage{cfg: cfg})
			return err
		}, nil
	})
}

// forwardAbort cancels eng's in-flight requests when abort closes (a
// second Ctrl-C), until the returned stop is called.
func forwardAbort(abort <-chan struct{}, eng *engine.Engine) (stop func()) {
	if abort == nil {
		return func() {}
	}
	finished := make(chan struct{})
	go func() {
		select {
		case <-abort:
			eng.Abort()
		case <-finished:
		}
	}()
	return func() { close(finished) }
}

// prepareRunDir creates the run directory with plan.yaml, experiment.json
// and env.json.
func prepareRunDir(ctx context.Context, p *plan.Plan, opts Options, d summary.Design) (string, error) {
	dir, err := rundir.Create(p.Output.Dir, p.Name, opts.clock().Now())
	if err != nil {
		return "", err
	}
	redacted, err := p.Redacted()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.Plan), redacted, 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", rundir.Plan, err)
	}
	if err := summary.WriteDesign(dir, d); err != nil {
		return "", err
	}
	env := environment(ctx, p, opts.Version, opts.Env.withDefaults())
	if p.Target.TracesContext() {
		env.TraceRun = opts.traceRun(dir)
	}
	if err := rundir.WriteJSON(filepath.Join(dir, rundir.Env), env); err != nil {
		return "", err
	}
	return dir, nil
}

// runFiles are the append-only logs of a run, flushed at least every second.
type runFiles struct {
	records, series, events *rundir.JSONLWriter
	closed                  bool
}

func openRunFiles(dir string, openLog func(string) (*rundir.JSONLWriter, error)) (*runFiles, error) {
	if openLog == nil {
		openLog = rundir.NewJSONLWriter
	}
	f := &runFiles{}
	var err error
	open := func(name string) *rundir.JSONLWriter {
		if err != nil {
			return nil
		}
		var w *rundir.JSONLWriter
		w, err = openLog(filepath.Join(dir, name))
		return w
	}
	f.records, f.series, f.events = open(rundir.Records), open(rundir.Series), open(rundir.Events)
	if err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

// close flushes and closes every log once.
func (f *runFiles) close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	var errs []error
	for _, w := range []*rundir.JSONLWriter{f.records, f.series, f.events} {
		if w != nil {
			errs = append(errs, w.Close())
		}
	}
	return errors.Join(errs...)
}

// startProgress ticks the progress line until the returned stop is called.
func startProgress(opts Options, p *plan.Plan, eng *engine.Engine, rec *recorder, runStart time.Time) (stop func()) {
	if opts.Progress == nil {
		return func() {}
	}
	every := opts.ProgressEvery
	if every <= 0 {
		every = 500 * time.Millisecond
	}
	bar := report.NewProgress(opts.Progress, opts.TTY)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				bar.Update(rec.snapshot(p, eng, runStart))
			case <-done:
				bar.Update(rec.snapshot(p, eng, runStart))
				bar.Done()
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}

// traceRun is the name trace ids are derived from (Options.TraceRun).
func (o Options) traceRun(dir string) string {
	if o.TraceRun != "" {
		return o.TraceRun
	}
	return filepath.Base(dir)
}
