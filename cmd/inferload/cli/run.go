package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
)

// outputFlags choose what a command prints when it finishes.
type outputFlags struct {
	quiet  bool
	format string
	// exports and live are bound only by the commands that offer them
	// (run, report); their zero values export nothing.
	exports exportFlags
	live    liveFlags
	// dist is bound by the commands that run load: a segment's start and
	// its collector.
	dist distFlags
	// ui is the live web UI, bound by run only; plan is the run's, set
	// before runExperiment.
	ui     uiFlags
	uiPlan *plan.Plan
	// ranDir, when set, is told each finished run's directory (--repeat).
	ranDir func(dir string)
}

func (o *outputFlags) bind(c *cobra.Command) {
	c.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "no progress line and no summary table (the run directory is still written)")
	c.Flags().StringVarP(&o.format, "output", "o", "text", "what to print at the end: text (a summary table) or json (summary.json)")
}

func (o *outputFlags) validate() error {
	if o.format != "text" && o.format != "json" {
		return usageErrorf("--output: %q is not one of text, json", o.format)
	}
	return nil
}

// print writes the final summary in the chosen format.
func (o *outputFlags) print(w io.Writer, s *record.Summary) error {
	if o.format == "json" {
		return report.WriteJSON(w, s)
	}
	if o.quiet {
		return nil
	}
	if err := report.WriteSummary(w, s); err != nil {
		return err
	}
	return report.WriteThresholds(w, s.Thresholds)
}

func newRunCmd(st *State) *cobra.Command {
	var file string
	var repeat int
	var precision, precisionOn string
	var out outputFlags
	c := &cobra.Command{
		Use:   "run [flags]",
		Short: "Run a load test against an OpenAI-compatible endpoint",
		Long: `Run a load test against an OpenAI-compatible endpoint and write a run
directory (records, per-second series, events, summary.json).

Closed loop (N users, each waits for its reply):
  inferload run --url http://127.0.0.1:8000/v1 --model m --concurrency 32 --duration 2m --warmup 20s

Open loop (arrivals on a schedule, latency counted from the intended time):
  inferload run --url http://127.0.0.1:8000/v1 --model m --rate 8 --arrival poisson --requests 2000

From a plan file, flags overriding it:
  inferload run -f plan.yaml --out runs/

Three runs of one scenario, and the run-to-run spread of each figure:
  inferload run -f plan.yaml --repeat 3

Up to 10 runs, stopping once throughput and median latencies are known to ±5%:
  inferload run -f plan.yaml --repeat 10 --precision 5%

Every flag is also a plan field; see docs/plan.md.`,
		Args: cobra.NoArgs,
	}
	flags := plan.BindFlags(c.Flags())
	c.Flags().StringVarP(&file, "file", "f", "", "YAML plan file (flags override its fields)")
	c.Flags().IntVar(&repeat, "repeat", 1, "run the plan this many times back to back (NAME-1, NAME-2, ...) and print each figure's mean over the runs with its confidence interval and run-to-run spread (2 to 100)")
	c.Flags().StringVar(&precision, "precision", "", "with --repeat N: stop before N runs once the 95% interval of every --precision-on figure is within this much of its mean, e.g. 5% (at least 3 runs)")
	c.Flags().StringVar(&precisionOn, "precision-on", strings.Join(analyze.DefaultPrecisionMetrics, ","), "the figures --precision watches, comma-separated")
	out.bind(c)
	out.dist.bind(c)
	out.exports.bind(c)
	out.live.bind(c)
	out.ui.bind(c)
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := out.validate(); err != nil {
			return err
		}
		p, err := plan.Load(file, flags, st.Getenv)
		if err != nil {
			return usageError(err)
		}
		warnFileLimit(st.Stderr, plannedConnections(p))
		if !cmd.Flags().Changed("repeat") && (cmd.Flags().Changed("precision") || cmd.Flags().Changed("precision-on")) {
			return usageErrorf("--precision needs --repeat N, the most runs")
		}
		if cmd.Flags().Changed("repeat") {
			if err := checkRepeat(cmd, repeat); err != nil {
				return err
			}
			prec, err := precisionOf(cmd, precision, precisionOn)
			if err != nil {
				return err
			}
			return runRepeats(cmd.Context(), st, p, out, repeat, prec)
		}
		return runPlan(cmd.Context(), st, p, out)
	}
	return c
}

// runPlan runs a resolved plan with live progress and prints the result.
func runPlan(ctx context.Context, st *State, p *plan.Plan, out outputFlags) error {
	out.uiPlan = p
	return runExperiment(ctx, st, out, p, func(ctx context.Context, opts experiment.Options) (*experiment.Outcome, error) {
		return experiment.Run(ctx, p, opts)
	})
}

// runExperiment runs one experiment (a run, sweep, capacity search or
// soak) with live progress and live exports, writes the chosen exports,
// prints the summary, and maps interruption and thresholds to exit codes.
func runExperiment(ctx context.Context, st *State, out outputFlags, p *plan.Plan,
	run func(context.Context, experiment.Options) (*experiment.Outcome, error)) error {
	ctx, abort, release := watchSignals(ctx, st.Signals)
	defer release()
	opts := experiment.Options{
		Env:     experiment.Env{Getenv: st.Getenv, ReadFile: st.ReadFile},
		Clock:   st.clock(),
		TTY:     st.StderrTTY,
		Version: st.Version,
		Abort:   abort,
		Started: func(dir string) {
			if !out.quiet {
				fmt.Fprintf(st.Stderr, "writing %s\n", dir)
			}
		},
		OTLPListening: func(addr string) {
			if !out.quiet {
				fmt.Fprintf(st.Stderr, "receiving OTLP trace spans (gRPC and HTTP) on %s\n", addr)
			}
		},
	}
	if !out.quiet {
		opts.Progress = st.Stderr
	}
	finishDist, err := out.dist.attach(ctx, st, p, &opts)
	if err != nil {
		return err
	}
	stopLive, err := out.live.start(st, p.Name, out.quiet, &opts)
	if err != nil {
		return err
	}
	runCtx, finishUI := ctx, func(*experiment.Outcome, error) {}
	if out.uiPlan != nil {
		var closeUI func() error
		if runCtx, finishUI, closeUI, err = out.ui.startUI(ctx, st, out.uiPlan, &opts); err != nil {
			return errors.Join(err, stopLive())
		}
		// After everything below, the summary printed: the page lingers
		// for a reader, never the terminal.
		defer func() {
			if err := closeUI(); err != nil {
				fmt.Fprintf(st.Stderr, "live UI: %v\n", err)
			}
		}()
	}
	res, err := run(runCtx, opts)
	finishUI(res, err)
	if wf := (*experiment.WriteFailure)(nil); errors.As(err, &wf) {
		return writeFailed(st, out, wf, stopLive())
	}
	if errors.Is(err, experiment.ErrInterrupted) {
		fmt.Fprintf(st.Stderr, "%v\n", errors.Join(err, stopLive()))
		return &exitError{code: ExitInterrupted, err: err}
	}
	if err := errors.Join(err, stopLive()); err != nil {
		return err
	}
	finishDist(ctx)
	if err := out.exports.write(ctx, st, res.Dir, res.Summary); err != nil {
		return err
	}
	printErr := out.print(st.Stdout, res.Summary)
	if res.Summary.Interrupted {
		// After a SIGHUP the terminal is gone and printing fails; the run
		// directory is complete, so the exit code still says "interrupted".
		if !out.quiet {
			fmt.Fprintf(st.Stderr, "results: %s\n", res.Dir)
		}
		fmt.Fprintln(st.Stderr, "run interrupted; everything up to the stop was written")
		return &exitError{code: ExitInterrupted, err: errors.Join(errors.New("interrupted"), printErr)}
	}
	if printErr != nil {
		return printErr
	}
	if !out.quiet {
		fmt.Fprintf(st.Stderr, "results: %s\n", res.Dir)
	}
	if out.ranDir != nil {
		out.ranDir(res.Dir)
	}
	if p.Load.Segment != "" {
		// A segment is a part: the collector's merged run is the one
		// whose validity gates (its thresholds still count here).
		return thresholdsFailed(res.Summary)
	}
	return thresholdsVerdict(res.Summary)
}

// writeFailed reports a run whose files stopped being written: the summary
// from memory on stdout, labelled on stderr, and ExitRecordsLost (whose
// message, printed last by Execute, says how many records are missing).
func writeFailed(st *State, out outputFlags, wf *experiment.WriteFailure, liveErr error) error {
	fmt.Fprintf(st.Stderr, "the summary below is from memory (the live aggregate of all %d finished requests), "+
		"not from the run directory; no summary.json or report.html was written\n", wf.Finished)
	if err := out.print(st.Stdout, wf.Summary); err != nil {
		liveErr = errors.Join(liveErr, err)
	}
	return &exitError{code: ExitRecordsLost, err: errors.Join(wf, liveErr)}
}

// watchSignals turns the first interrupt into a graceful stop (ctx done) and
// the second into an abort of in-flight requests. Call release when the run
// is over.
func watchSignals(parent context.Context, sig <-chan os.Signal) (ctx context.Context, abort <-chan struct{}, release func()) {
	ctx, stop := context.WithCancel(parent)
	aborted := make(chan struct{})
	over := make(chan struct{})
	go func() {
		select {
		case <-sig:
			stop()
		case <-over:
			return
		}
		select {
		case <-sig:
			close(aborted)
		case <-over:
		}
	}()
	return ctx, aborted, func() { close(over); stop() }
}
