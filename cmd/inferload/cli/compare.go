package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/report"
	"github.com/inferload/inferload/summary"
)

// compareFlags are the options of `inferload compare`.
type compareFlags struct {
	format          string
	limits          []string
	noDefaultLimits bool
	confidence      float64
	resamples       int
	seed            uint64
	html            string
	embed           bool
	allowInvalid    bool
	batches         int
}

// maxResamples bounds the bootstrap so a typo cannot hang a CI job;
// maxBatches and maxRuns bound the runs check and the repeats a side.
const (
	maxResamples = 1_000_000
	maxBatches   = 1000
	maxRuns      = 100
)

func newCompareCmd(st *State) *cobra.Command {
	var f compareFlags
	c := &cobra.Command{
		Use:   "compare BASELINE[,BASELINE...] CURRENT[,CURRENT...]",
		Short: "Compare two run directories figure by figure, with confidence intervals, and fail on a regression",
		Long: `Compare two run directories from their records: latency percentiles
(TTFT, ITL, TPOT, E2E) overall and per class, throughput and failure rate,
each with the difference and one test's p-value and interval (an exact
quantile test for percentiles, a seeded bootstrap for throughput, a
two-proportion z test for failure rates), and the env.json fields that
differ. A percentile a run is too short to judge is reported as such.

A difference must also stand against the variance between runs: with
repeats (several run directories a side, comma-separated) each run's own
value of the figure is a unit, with one run a side each of --batches
contiguous batches of it is; a difference the units do not confirm
(Welch's t) is "cannot tell", never a regression.

A figure regresses when it is significantly worse and its interval reaches
beyond its limit; the limits share the error rate (Bonferroni). The default
limits fail when P99 TTFT, ITL or E2E, or output tokens/s, is more than 10%
worse; --limit adds or replaces one (KEY=10%, KEY=0.01 in the figure's unit,
KEY=off). Exit code 98 means a regression; 97 that a run was NOT VALID by its
own summary.json (--allow-invalid lets the figures decide; see docs/compare.md).`,
		Example: `  inferload compare runs/base runs/new
  inferload compare runs/base-1,runs/base-2,runs/base-3 runs/new-1,runs/new-2,runs/new-3
  inferload compare --format markdown --limit ttft_ms.p95=5% runs/base runs/new > comment.md
  inferload compare --format json --html compare.html runs/base runs/new`,
		Args: cobra.ExactArgs(2),
	}
	fl := c.Flags()
	fl.StringVar(&f.format, "format", "text", "output format: text, markdown or json")
	fl.StringArrayVar(&f.limits, "limit", nil, "regression limit METRIC=VALUE (10% relative, 0.01 absolute, off); repeatable")
	fl.BoolVar(&f.noDefaultLimits, "no-default-limits", false, "drop the default limits (P99 TTFT/ITL/E2E and output tokens/s, 10%)")
	fl.Float64Var(&f.confidence, "confidence", analyze.DefaultConfidence, "confidence level of the intervals, in (0, 1)")
	fl.IntVar(&f.resamples, "resamples", analyze.DefaultResamples, "bootstrap resamples per throughput figure")
	fl.Uint64Var(&f.seed, "seed", 0, "bootstrap seed of the throughput figures: the same runs and seed give the same intervals")
	fl.StringVar(&f.html, "html", "", "also write the comparison as a self-contained HTML page to this file")
	fl.IntVar(&f.batches, "batches", analyze.DefaultBatches, "with one run a side, the contiguous batches each is cut into to check a difference against the variance inside a run (0: no check; values are then taken as independent)")
	fl.BoolVar(&f.allowInvalid, "allow-invalid", false, "let the figures decide when a run is NOT VALID (otherwise such a comparison exits 97)")
	fl.BoolVar(&f.embed, "embed", false, "also embed the comparison in CURRENT's report.html (kept as compare.json in its run directory)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		opts, write, err := f.options()
		if err != nil {
			return err
		}
		return runCompare(st, args[0], args[1], opts, write, f.html, f.embed, f.allowInvalid)
	}
	return c
}

// options validates the flags into comparison options and a renderer.
func (f *compareFlags) options() (analyze.CompareOptions, func(io.Writer, *analyze.Comparison) error, error) {
	var opts analyze.CompareOptions
	write, ok := map[string]func(io.Writer, *analyze.Comparison) error{
		"text": report.WriteCompare, "markdown": report.WriteCompareMarkdown, "json": report.WriteCompareJSON,
	}[f.format]
	if !ok {
		return opts, nil, usageErrorf("--format %q: want text, markdown or json", f.format)
	}
	if !(f.confidence > 0 && f.confidence < 1) {
		return opts, nil, usageErrorf("--confidence %v: want a level between 0 and 1, e.g. 0.95", f.confidence)
	}
	if f.batches < 0 || f.batches == 1 || f.batches > maxBatches {
		return opts, nil, usageErrorf("--batches %d: want 0 (no check) or 2 to %d", f.batches, maxBatches)
	}
	if f.resamples < 100 || f.resamples > maxResamples {
		return opts, nil, usageErrorf("--resamples %d: want 100 to %d", f.resamples, maxResamples)
	}
	limits := []analyze.Limit{}
	for _, s := range f.limits {
		l, err := analyze.ParseLimit(s)
		if err != nil {
			return opts, nil, usageErrorf("--limit: %w", err)
		}
		limits = append(limits, l)
	}
	if !f.noDefaultLimits {
		limits = analyze.WithDefaults(limits)
	}
	opts = analyze.CompareOptions{Limits: limits, Confidence: f.confidence, Resamples: f.resamples, Seed: f.seed,
		Batches: f.batches, NoRunsCheck: f.batches == 0}
	return opts, write, nil
}

// runCompare loads both runs, compares them, prints and maps a regression
// to ExitRegression, then a NOT VALID run to ExitNotValid unless allowed.
func runCompare(st *State, baseDir, curDir string, opts analyze.CompareOptions,
	write func(io.Writer, *analyze.Comparison) error, htmlPath string, embed, allowInvalid bool) error {
	base, err := loadSide(baseDir)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	cur, err := loadSide(curDir)
	if err != nil {
		return fmt.Errorf("current: %w", err)
	}
	c := analyze.CompareRuns(base, cur, opts)
	if err := write(st.Stdout, c); err != nil {
		return err
	}
	if htmlPath != "" {
		if err := report.WriteCompareHTMLFile(htmlPath, c); err != nil {
			return err
		}
	}
	if embed {
		if len(cur) > 1 {
			return usageErrorf("--embed: the current side has %d runs; embed into one run's report", len(cur))
		}
		if err := summary.EmbedComparison(curDir, c); err != nil {
			return fmt.Errorf("--embed: %w", err)
		}
	}
	if err := regressionVerdict(c); err != nil || allowInvalid || len(c.NotValid) == 0 {
		return err
	}
	return &exitError{code: ExitNotValid, err: fmt.Errorf("%s (--allow-invalid lets the figures decide)", strings.Join(c.NotValid, "; "))}
}

// loadSide loads one side's runs: a run directory, or several
// comma-separated (repeats of one scenario).
func loadSide(dirs string) ([]*analyze.RunSamples, error) {
	parts := strings.Split(dirs, ",")
	if len(parts) > maxRuns {
		return nil, usageErrorf("%d runs: at most %d a side", len(parts), maxRuns)
	}
	var out []*analyze.RunSamples
	for _, dir := range parts {
		if dir = strings.TrimSpace(dir); dir == "" {
			return nil, usageErrorf("%q: an empty run directory in the list", dirs)
		}
		rs, err := summary.LoadRunSamples(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, rs)
	}
	return out, nil
}

// regressionVerdict is nil when nothing regressed, and otherwise the error
// that exits with ExitRegression.
func regressionVerdict(c *analyze.Comparison) error {
	if c.Regressions == 0 {
		return nil
	}
	return &exitError{code: ExitRegression, err: fmt.Errorf("regression: %s", strings.Join(c.Worse(), ", "))}
}
