package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
)

// Options are a run's connections to the outside world. The zero value runs
// silently with the process environment.
type Options struct {
	Env Env
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
	// Started is called once the phase's clock has started, with the run
	// directory; the CLI uses it to tell the user where results go.
	Started func(dir string)
	// OnResult, when set, is called with every finished request on the
	// collector goroutine, right after it was written to records.jsonl:
	// the feed of live exporters (report.LiveMetrics.Observe). It must be
	// quick, since it holds up recording, and must not modify the result.
	OnResult func(*record.Result)
	// InFlight, when set, is called once the engine has started with a
	// function that reports its requests in flight, for live exporters.
	InFlight func(current func() int)
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
	env := opts.Env.withDefaults()
	client, err := newClient(p, env)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	inputs := newWorkloadFiles()
	cfg, err := engineConfig(p, client, inputs)
	if err != nil {
		return nil, err
	}
	eng, err := engine.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := checkObserve(p); err != nil {
		return nil, err
	}
	printDatasetProfiles(opts.Progress, p, inputs)
	dir, err := prepareRunDir(p, opts.Version)
	if err != nil {
		return nil, err
	}
	files, err := openRunFiles(dir)
	if err != nil {
		return nil, err
	}
	defer files.close()

	ph, err := runPhase(ctx, p, opts, eng, dir, files)
	if err != nil {
		return nil, err
	}
	return writeOutcome(dir, files, p, ph.summary, ph.pending)
}

// phase is what a finished phase leaves to write: its judged summary and
// any write error met on the way (the run went on; it is reported last).
type phase struct {
	summary *record.Summary
	pending error
}

// runPhase drives the engine's one phase into the run directory's logs,
// with telemetry and progress.
func runPhase(ctx context.Context, p *plan.Plan, opts Options, eng *engine.Engine, dir string, files *runFiles) (phase, error) {
	out := make(chan *record.Result, 1024)
	go func() { _ = eng.Run(ctx, out) }()
	start := eng.Started()
	defer forwardAbort(opts.Abort, eng)()
	if opts.Started != nil {
		opts.Started(dir)
	}
	rec := newRecorder(files, p)
	rec.onResult = opts.OnResult
	if opts.InFlight != nil {
		opts.InFlight(eng.InFlight)
	}
	if err := files.events.Write(record.Event{Kind: record.EventRunStart, Message: start.UTC().Format(time.RFC3339Nano)}); err != nil {
		return phase{}, err
	}
	tel, err := startTelemetry(ctx, p, dir, start, files.events, rec.takePacerLag)
	if err != nil {
		return phase{}, err
	}
	for _, e := range planNotes(p) {
		rec.keep(files.events.Write(e))
	}
	stopProgress := startProgress(opts, p, eng, rec)
	for r := range out {
		rec.add(r, start)
	}
	stopProgress()
	samples, telErr := tel.stop()

	info := rec.finish(eng, start, ctx.Err() != nil)
	s := rec.summary(info)
	observe.Summarize(samples, info, s)
	if err := judgeRun(s, p, rec.agg, info); err != nil {
		return phase{}, err
	}
	return phase{summary: s, pending: errors.Join(rec.err, telErr)}, nil
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

// writeOutcome finishes a run directory: the plan's thresholds are checked,
// the logs closed, and summary.json and report.html written. pending is a
// write error met during the run, reported now that nothing else can fail.
func writeOutcome(dir string, files *runFiles, p *plan.Plan, s *record.Summary, pending error) (*Outcome, error) {
	if err := applyThresholds(s, p.Thresholds); err != nil {
		return nil, err
	}
	if err := errors.Join(pending, files.close()); err != nil {
		return nil, fmt.Errorf("writing run directory %s: %w", dir, err)
	}
	if err := record.WriteSummary(filepath.Join(dir, SummaryFile), s); err != nil {
		return nil, err
	}
	if err := WriteReport(dir, s); err != nil {
		return nil, err
	}
	return &Outcome{Dir: dir, Summary: s}, nil
}

// prepareRunDir creates the run directory with plan.yaml and env.json.
func prepareRunDir(p *plan.Plan, version string) (string, error) {
	dir, err := makeRunDir(p.Output.Dir, p.Name, time.Now())
	if err != nil {
		return "", err
	}
	redacted, err := p.Redacted()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, PlanFile), redacted, 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", PlanFile, err)
	}
	if err := writeJSONFile(filepath.Join(dir, EnvFile), environment(context.Background(), p, version, Env{}.withDefaults())); err != nil {
		return "", err
	}
	return dir, nil
}

// runFiles are the append-only logs of a run, flushed at least every second.
type runFiles struct {
	records, series, events *record.JSONLWriter
	closed                  bool
}

func openRunFiles(dir string) (*runFiles, error) {
	f := &runFiles{}
	var err error
	open := func(name string) *record.JSONLWriter {
		if err != nil {
			return nil
		}
		var w *record.JSONLWriter
		w, err = record.NewJSONLWriter(filepath.Join(dir, name))
		return w
	}
	f.records, f.series, f.events = open(RecordsFile), open(SeriesFile), open(EventsFile)
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
	for _, w := range []*record.JSONLWriter{f.records, f.series, f.events} {
		if w != nil {
			errs = append(errs, w.Close())
		}
	}
	return errors.Join(errs...)
}

// startProgress ticks the progress line until the returned stop is called.
func startProgress(opts Options, p *plan.Plan, eng *engine.Engine, rec *recorder) (stop func()) {
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
				bar.Update(rec.snapshot(p, eng))
			case <-done:
				bar.Update(rec.snapshot(p, eng))
				bar.Done()
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}
