package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/summary"
)

// maxRepeat bounds --repeat.
const maxRepeat = 100

// oneRunFlags name one destination or one instant for one run: with
// --repeat each run would overwrite or miss it.
var oneRunFlags = []string{"ui", "start-at", "collector", "segment", "junit", "influx-out"}

// checkRepeat refuses a --repeat out of range, or with a flag that
// belongs to one run.
func checkRepeat(cmd *cobra.Command, n int) error {
	if n < 2 || n > maxRepeat {
		return usageErrorf("--repeat %d: want 2 to %d runs", n, maxRepeat)
	}
	for _, name := range oneRunFlags {
		if cmd.Flags().Lookup(name) != nil && cmd.Flags().Changed(name) {
			return usageErrorf("--repeat with --%s: it names one run's destination or start; run the repeats one by one", name)
		}
	}
	return nil
}

// runRepeats runs p n times back to back, each named NAME-i, and prints
// each figure's mean over the runs with its confidence interval and
// run-to-run spread (analyze.Repeats). With a precision (Rel > 0) it
// stops as soon as the precision rule is met (analyze.Precision), n
// being the most runs.
func runRepeats(ctx context.Context, st *State, p *plan.Plan, out outputFlags, n int, prec analyze.Precision) error {
	var runs []*analyze.RunSamples
	var check *analyze.PrecisionCheck
	var stop func(dirs []string) (bool, error)
	if prec.Rel > 0 {
		stop = func(dirs []string) (bool, error) {
			r, err := summary.LoadRunSamples(dirs[len(dirs)-1])
			if err != nil {
				return false, err
			}
			runs = append(runs, r)
			c := prec.Check(len(runs), analyze.Repeats(runs, analyze.DefaultConfidence))
			check = &c
			return c.Met, nil
		}
	}
	dirs, verdicts, err := repeatRuns(ctx, st, p, out, n, runPlan, stop)
	if err != nil {
		return err
	}
	if stop == nil {
		if runs, err = loadEach(dirs, summary.LoadRunSamples); err != nil {
			return err
		}
	}
	figures := analyze.Repeats(runs, analyze.DefaultConfidence)
	switch {
	case out.format == "json":
		err = report.WriteRepeatsJSON(st.Stdout, dirs, figures, check)
	case !out.quiet:
		err = report.WriteRepeats(st.Stdout, dirs, figures, check, n)
		fmt.Fprintf(st.Stderr, "compare these runs as one side: inferload compare BASELINE %s\n", strings.Join(dirs, ","))
	}
	return errors.Join(append([]error{err}, verdicts...)...)
}

// parsePrecision reads --precision: a percentage (5%) or a fraction
// (0.05) of the mean, above 0 and below 1.
func parsePrecision(s string) (float64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	if strings.HasSuffix(t, "%") {
		t, scale = strings.TrimSpace(strings.TrimSuffix(t, "%")), 0.01
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || v*scale <= 0 || v*scale >= 1 {
		return 0, usageErrorf("--precision %q: want a half-width relative to the mean, such as 5%% or 0.05 (above 0, below 100%%)", s)
	}
	return v * scale, nil
}

// runSteppedRepeats runs a sweep or capacity search n times and prints,
// per step, each figure's mean over the runs with its interval, and each
// run's verdicts (where to run, the knee, the capacity) side by side, so
// a verdict is read with how often it held (analyze.StepRepeats).
func runSteppedRepeats(ctx context.Context, st *State, p *plan.Plan, out outputFlags, n int,
	once func(context.Context, *State, *plan.Plan, outputFlags) error) error {
	dirs, verdicts, err := repeatRuns(ctx, st, p, out, n, once, nil)
	if err != nil {
		return err
	}
	sums, err := loadEach(dirs, func(dir string) (*record.Summary, error) {
		return rundir.ReadSummary(filepath.Join(dir, rundir.Summary))
	})
	if err != nil {
		return err
	}
	rep := analyze.StepRepeats(sums, analyze.DefaultConfidence)
	switch {
	case out.format == "json":
		err = report.WriteStepRepeatsJSON(st.Stdout, dirs, rep)
	case !out.quiet:
		err = report.WriteStepRepeats(st.Stdout, dirs, rep)
	}
	return errors.Join(append([]error{err}, verdicts...)...)
}

// loadEach reads one T from each run directory, in order.
func loadEach[T any](dirs []string, load func(string) (T, error)) ([]T, error) {
	out := make([]T, 0, len(dirs))
	for _, dir := range dirs {
		v, err := load(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// repeatRuns runs once n times back to back, each with the plan named
// NAME-i, and returns their directories. An interrupted run ends the
// repeats (err); a run whose thresholds failed, or that is NOT VALID,
// does not: its verdict is kept, and the exit code is the first such
// run's. stop, when set, is asked after each run whether the repeats may
// end there.
func repeatRuns(ctx context.Context, st *State, p *plan.Plan, out outputFlags, n int,
	once func(context.Context, *State, *plan.Plan, outputFlags) error,
	stop func(dirs []string) (bool, error)) (dirs []string, verdicts []error, err error) {
	out.ranDir = func(dir string) { dirs = append(dirs, dir) }
	inner := out
	if out.format == "json" {
		// One JSON document at the end: each run's summary.json is in
		// its directory.
		inner.format, inner.quiet = "text", true
	}
	for i := 1; i <= n; i++ {
		q := *p
		q.Name = fmt.Sprintf("%s-%d", p.Name, i)
		if !out.quiet {
			fmt.Fprintf(st.Stderr, "repeat %d of %d\n", i, n)
		}
		err := once(ctx, st, &q, inner)
		var ee *exitError
		if err != nil && !(errors.As(err, &ee) && (ee.code == ExitThresholds || ee.code == ExitNotValid)) {
			return nil, nil, err // interrupted, lost records or a failure: stop here
		}
		if err != nil {
			verdicts = append(verdicts, err)
		}
		if stop != nil && len(dirs) > 0 {
			done, err := stop(dirs)
			if err != nil {
				return nil, nil, err
			}
			if done {
				break
			}
		}
	}
	return dirs, verdicts, nil
}

// precisionOf reads --precision and --precision-on; no --precision is
// the zero rule (run every repeat).
func precisionOf(cmd *cobra.Command, precision, on string) (analyze.Precision, error) {
	if !cmd.Flags().Changed("precision") {
		if cmd.Flags().Changed("precision-on") {
			return analyze.Precision{}, usageErrorf("--precision-on without --precision: say how narrow, e.g. --precision 5%%")
		}
		return analyze.Precision{}, nil
	}
	rel, err := parsePrecision(precision)
	if err != nil {
		return analyze.Precision{}, err
	}
	metrics, err := analyze.ParsePrecisionMetrics(on)
	if err != nil {
		return analyze.Precision{}, usageErrorf("--precision-on: %v", err)
	}
	return analyze.Precision{Rel: rel, Metrics: metrics}, nil
}
