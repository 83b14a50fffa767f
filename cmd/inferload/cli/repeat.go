package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
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
// run-to-run spread (analyze.Repeats).
func runRepeats(ctx context.Context, st *State, p *plan.Plan, out outputFlags, n int) error {
	dirs, verdicts, err := repeatRuns(ctx, st, p, out, n, runPlan)
	if err != nil {
		return err
	}
	runs, err := loadEach(dirs, summary.LoadRunSamples)
	if err != nil {
		return err
	}
	figures := analyze.Repeats(runs, analyze.DefaultConfidence)
	switch {
	case out.format == "json":
		err = report.WriteRepeatsJSON(st.Stdout, dirs, figures)
	case !out.quiet:
		err = report.WriteRepeats(st.Stdout, dirs, figures)
		fmt.Fprintf(st.Stderr, "compare these runs as one side: inferload compare BASELINE %s\n", strings.Join(dirs, ","))
	}
	return errors.Join(append([]error{err}, verdicts...)...)
}

// runSteppedRepeats runs a sweep or capacity search n times and prints,
// per step, each figure's mean over the runs with its interval, and each
// run's verdicts (where to run, the knee, the capacity) side by side, so
// a verdict is read with how often it held (analyze.StepRepeats).
func runSteppedRepeats(ctx context.Context, st *State, p *plan.Plan, out outputFlags, n int,
	once func(context.Context, *State, *plan.Plan, outputFlags) error) error {
	dirs, verdicts, err := repeatRuns(ctx, st, p, out, n, once)
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
// run's.
func repeatRuns(ctx context.Context, st *State, p *plan.Plan, out outputFlags, n int,
	once func(context.Context, *State, *plan.Plan, outputFlags) error) (dirs []string, verdicts []error, err error) {
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
	}
	return dirs, verdicts, nil
}
