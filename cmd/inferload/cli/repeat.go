package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/report"
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
// run-to-run spread (analyze.Repeats). An interrupted run ends the
// repeats; a run whose thresholds failed, or that is NOT VALID, does
// not, and the exit code is the first such run's.
func runRepeats(ctx context.Context, st *State, p *plan.Plan, out outputFlags, n int) error {
	var dirs []string
	out.ranDir = func(dir string) { dirs = append(dirs, dir) }
	inner := out
	if out.format == "json" {
		// One JSON document at the end: each run's summary.json is in
		// its directory.
		inner.format, inner.quiet = "text", true
	}
	var verdicts []error
	for i := 1; i <= n; i++ {
		q := *p
		q.Name = fmt.Sprintf("%s-%d", p.Name, i)
		if !out.quiet {
			fmt.Fprintf(st.Stderr, "repeat %d of %d\n", i, n)
		}
		err := runPlan(ctx, st, &q, inner)
		var ee *exitError
		if err != nil && !(errors.As(err, &ee) && (ee.code == ExitThresholds || ee.code == ExitNotValid)) {
			return err // interrupted, lost records or a failure: stop here
		}
		if err != nil {
			verdicts = append(verdicts, err)
		}
	}
	var runs []*analyze.RunSamples
	for _, dir := range dirs {
		rs, err := summary.LoadRunSamples(dir)
		if err != nil {
			return err
		}
		runs = append(runs, rs)
	}
	figures := analyze.Repeats(runs, analyze.DefaultConfidence)
	var err error
	switch {
	case out.format == "json":
		err = report.WriteRepeatsJSON(st.Stdout, dirs, figures)
	case !out.quiet:
		err = report.WriteRepeats(st.Stdout, dirs, figures)
		fmt.Fprintf(st.Stderr, "compare these runs as one side: inferload compare BASELINE %s\n", strings.Join(dirs, ","))
	}
	return errors.Join(append([]error{err}, verdicts...)...)
}
