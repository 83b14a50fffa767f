package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/inferload/inferload/analyze"
)

// compareHead names the columns of a comparison table; compareCells fills
// them, so the terminal, Markdown and HTML renderings say the same thing.
var compareHead = []string{"metric", "baseline", "current", "change", "CI of change", "p", "verdict"}

// compareCells renders one delta: figures in their unit, the change as a
// difference and a percentage, its interval, p-value and verdict.
func compareCells(d *analyze.Delta) []string {
	f := compareFormatter(d.Metric)
	change := f(d.Diff, true)
	if d.Relative != nil {
		change += fmt.Sprintf(" (%+.1f%%)", *d.Relative*100)
	}
	ci := fmt.Sprintf("[%s, %s]", f(d.DiffLow, true), f(d.DiffHigh, true))
	if d.Family > 0 {
		ci += fmt.Sprintf(" at %.4g%%", d.Level*100)
	}
	return []string{d.Metric, f(d.Baseline, false), f(d.Current, false), change, ci,
		comparePValue(d.PValue), compareVerdict(d)}
}

// compareFormatter picks the unit a metric is shown in: ms for latencies,
// percent (points, for changes) for shares (failure rate, accuracy,
// goodput), plain rates otherwise.
func compareFormatter(metric string) func(v float64, signed bool) string {
	switch {
	case strings.HasSuffix(metric, "failure_rate") || strings.HasSuffix(metric, "accuracy") || strings.HasSuffix(metric, "_goodput"):
		return func(v float64, signed bool) string {
			if signed {
				return fmt.Sprintf("%+.2f pp", v*100)
			}
			return fmt.Sprintf("%.2f%%", v*100)
		}
	case strings.Contains(metric, "_ms."):
		return func(v float64, signed bool) string {
			sign := ""
			switch {
			case v < 0:
				sign = "-"
			case signed:
				sign = "+"
			}
			return sign + formatMS(math.Abs(v)) + " ms"
		}
	}
	return func(v float64, signed bool) string {
		if signed {
			return fmt.Sprintf("%+.1f", v)
		}
		return fmt.Sprintf("%.1f", v)
	}
}

// comparePValue keeps small p-values readable: 0.042, 3e-05, <1e-300.
func comparePValue(p float64) string {
	switch {
	case p == 0:
		return "<1e-300"
	case p < 0.001:
		return fmt.Sprintf("%.0e", p)
	}
	return fmt.Sprintf("%.3f", p)
}

// compareVerdict is REGRESSION, or the direction with the limit that held.
func compareVerdict(d *analyze.Delta) string {
	v := d.Change
	switch {
	case d.Change == analyze.ChangeTooShort:
		v = fmt.Sprintf("too short to judge (%d values each needed)", d.NeededN)
	case d.Change == analyze.ChangeCannotTell && d.Runs != nil:
		v = "cannot tell: " + runsReason(d)
	}
	if d.Regression {
		v = "REGRESSION"
	}
	if d.Limit != "" {
		v += " (limit " + d.Limit + ")"
	}
	return v
}

// runsReason says why the runs check did not confirm a difference.
func runsReason(d *analyze.Delta) string {
	r, f := d.Runs, compareFormatter(d.Metric)
	units := "runs"
	if r.Test == analyze.TestBatchMeans {
		units = "batches"
	}
	if r.TooFew {
		return "too few values in each of the " + units + " to check it against their spread"
	}
	return fmt.Sprintf("the %s differ by %s [%s, %s], p %s", units, f(r.Diff, true), f(r.DiffLow, true), f(r.DiffHigh, true), comparePValue(r.PValue))
}

// compareHeadline is the one-line answer: what regressed, or that nothing
// did; either way a NOT VALID run says so, since its figures do not
// measure the load it meant to apply.
func compareHeadline(c *analyze.Comparison) string {
	if len(c.NotValid) == 0 {
		return verdictHeadline(c)
	}
	head := verdictHeadline(c)
	if c.Regressions == 0 {
		head = "NOT VALID: " + strings.TrimPrefix(head, "PASS: ")
	}
	return fmt.Sprintf("%s; but %s: rerun it, or pass --allow-invalid to let the figures decide", head, strings.Join(c.NotValid, "; "))
}

// verdictHeadline is the figures' verdict alone.
func verdictHeadline(c *analyze.Comparison) string {
	if c.Regressions > 0 {
		return fmt.Sprintf("REGRESSION: %s significantly worse beyond %s",
			strings.Join(c.Worse(), ", "), plural(c.Regressions, "its limit", "their limits"))
	}
	if len(c.Limits) == 0 {
		return "PASS: no regression limits were set"
	}
	pass := "PASS: no figure is significantly worse beyond its limit"
	if short := c.Unjudged(); len(short) > 0 {
		pass += fmt.Sprintf("; too short to judge: %s (run longer)", strings.Join(short, ", "))
	}
	if cannot := c.CannotTell(); len(cannot) > 0 {
		pass += fmt.Sprintf("; cannot tell from run-to-run noise: %s", strings.Join(cannot, ", "))
		if c.BaselineRuns <= 1 && c.CurrentRuns <= 1 {
			pass += " (repeat each side and list the runs, comma-separated)"
		}
	}
	return pass
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// compareMethod says how the intervals were computed, for every rendering.
func compareMethod(c *analyze.Comparison) string {
	return fmt.Sprintf("Intervals of current − baseline and p from one test per figure: %s. Significant = p < %.2g = the interval excludes 0. Figures with a limit share the %.2g error rate (Bonferroni): their p is multiplied by the number of limits and their interval is at the level shown. %s A regression is significantly worse with the interval's worse end beyond the limit.",
		compareTests(c), 1-c.Confidence, 1-c.Confidence, compareRunsMethod(c))
}

// compareRunsMethod says what a difference was checked against.
func compareRunsMethod(c *analyze.Comparison) string {
	switch {
	case c.BaselineRuns > 1 || c.CurrentRuns > 1:
		return fmt.Sprintf("A difference must also stand between the runs (%d baseline, %d current; Welch's t on each run's own figure), else it is \"cannot tell\".", c.BaselineRuns, c.CurrentRuns)
	case c.Batches > 0:
		return fmt.Sprintf("A difference must also stand between %d contiguous batches of each run (Welch's t on each batch's figure, for latencies serially correlated under load), else it is \"cannot tell\"; one run a side cannot show a shift that lasts a whole run: repeat each side for that.", c.Batches)
	}
	return "Values are taken as independent (no runs check)."
}

// WriteCompare writes a comparison for a terminal: the verdict, the table
// of figures, the environment fields that differ.
func WriteCompare(w io.Writer, c *analyze.Comparison) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "baseline  %s\ncurrent   %s\n\n", printable(c.Baseline), printable(c.Current))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(compareHead, "\t"))
	for i := range c.Deltas {
		fmt.Fprintln(tw, strings.Join(compareCells(&c.Deltas[i]), "\t"))
	}
	tw.Flush()
	fmt.Fprintf(&b, "\n%s\n", compareMethod(c))
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "\nwarning: %s\n", printable(w))
	}
	writeCompareEnvText(&b, c)
	writeUnusedLimits(&b, c, "")
	fmt.Fprintf(&b, "\n%s\n", compareHeadline(c))
	_, err := w.Write(b.Bytes())
	return err
}

func writeCompareEnvText(b *bytes.Buffer, c *analyze.Comparison) {
	if len(c.Env) == 0 {
		b.WriteString("\nEnvironment: no env.json field differs.\n")
		return
	}
	b.WriteString("\nEnvironment (env.json fields that differ)\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "field\tbaseline\tcurrent")
	for _, e := range c.Env {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", printable(e.Field), printable(envSide(e, "baseline")), printable(envSide(e, "current")))
	}
	tw.Flush()
}

// envSide is one run's value of a changed field, or "(absent)".
func envSide(e analyze.EnvChange, side string) string {
	switch {
	case e.Absent == side:
		return "(absent)"
	case side == "baseline":
		return e.Baseline
	}
	return e.Current
}

func writeUnusedLimits(b *bytes.Buffer, c *analyze.Comparison, bullet string) {
	for _, l := range c.UnusedLimits {
		fmt.Fprintf(b, "%snote: limit %s names a figure one of the runs does not have; it checked nothing\n", bullet, l)
	}
}

// printable replaces control characters (a target's text could carry
// terminal escape sequences, or tabs that break the table) with '?'.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}

// WriteCompareJSON writes the comparison as indented JSON (docs/compare.md).
func WriteCompareJSON(w io.Writer, c *analyze.Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("encode comparison: %w", err)
	}
	return nil
}

// WriteCompareMarkdown writes the comparison as GitHub-flavoured Markdown
// for a pull-request comment: the verdict first, the table, and the
// environment diff folded away. Text from the runs is escaped so a model
// name cannot break the table or inject markup.
func WriteCompareMarkdown(w io.Writer, c *analyze.Comparison) error {
	var b bytes.Buffer
	icon := "✅"
	switch {
	case c.Regressions > 0:
		icon = "❌"
	case len(c.NotValid) > 0:
		icon = "⚠️"
	}
	fmt.Fprintf(&b, "### %s inferload compare: %s\n\n", icon, mdEscape(compareHeadline(c)))
	fmt.Fprintf(&b, "Baseline `%s` → current `%s`.\n\n", mdCode(c.Baseline), mdCode(c.Current))
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "> ⚠️ %s\n\n", mdEscape(w))
	}
	key := keyDeltas(c)
	if len(key) > 0 {
		mdDeltaTable(&b, c, key)
	} else {
		b.WriteString("No figure has a limit or changed by 5% or more.\n")
	}
	fmt.Fprintf(&b, "\n<details><summary>All %d figures, and how they were compared</summary>\n\n", len(c.Deltas))
	mdDeltaTable(&b, c, nil)
	fmt.Fprintf(&b, "\n%s\n", mdEscape(compareMethod(c)))
	writeUnusedLimits(&b, c, "\n- ")
	b.WriteString("\n</details>\n")
	writeCompareEnvMarkdown(&b, c)
	_, err := w.Write(b.Bytes())
	return err
}

// MaterialChange is the smallest relative change a pull-request comment's
// first table shows for a figure without a limit: a significant +0.4% on
// ITL is real but no reason to read on.
const MaterialChange = 0.05

// keyDeltas are the indexes of the deltas a reader must see first:
// regressions, then the other figures with a limit, then those that
// changed significantly by MaterialChange or more (or from zero), worse
// before better.
func keyDeltas(c *analyze.Comparison) []int {
	rank := func(d *analyze.Delta) int {
		material := d.Significant && (d.Relative == nil || math.Abs(*d.Relative) >= MaterialChange) // nil: from zero
		switch {
		case d.Regression:
			return 0
		case d.Limit != "":
			return 1
		case material && d.Change == "worse":
			return 2
		case material:
			return 3
		}
		return -1
	}
	var out []int
	for i := range c.Deltas {
		if rank(&c.Deltas[i]) >= 0 {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return rank(&c.Deltas[a]) - rank(&c.Deltas[b]) })
	return out
}

// mdDeltaTable writes the deltas at the given indexes (all when nil) as a
// Markdown table, regressions marked.
func mdDeltaTable(b *bytes.Buffer, c *analyze.Comparison, which []int) {
	if which == nil {
		for i := range c.Deltas {
			which = append(which, i)
		}
	}
	mdRow(b, compareHead)
	mdRow(b, mdRule(len(compareHead)))
	for _, i := range which {
		cells := compareCells(&c.Deltas[i])
		if c.Deltas[i].Regression {
			cells[len(cells)-1] = "❌ " + cells[len(cells)-1]
		}
		mdRow(b, cells)
	}
}

func writeCompareEnvMarkdown(b *bytes.Buffer, c *analyze.Comparison) {
	if len(c.Env) == 0 {
		b.WriteString("\nEnvironment: no env.json field differs.\n")
		return
	}
	fmt.Fprintf(b, "\n<details><summary>Environment: %d env.json %s differ</summary>\n\n", len(c.Env), plural(len(c.Env), "field", "fields"))
	mdRow(b, []string{"field", "baseline", "current"})
	mdRow(b, mdRule(3))
	for _, e := range c.Env {
		mdRow(b, []string{e.Field, envSide(e, "baseline"), envSide(e, "current")})
	}
	b.WriteString("\n</details>\n")
}

func mdRule(n int) []string {
	r := make([]string, n)
	for i := range r {
		r[i] = "---"
	}
	return r
}

// mdRow writes one table row with every cell escaped.
func mdRow(b *bytes.Buffer, cells []string) {
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" " + mdEscape(c) + " |")
	}
	b.WriteString("\n")
}

// mdEscaper neutralises what could end a table cell, start markup or
// inject HTML: a target's model name is data, not Markdown.
var mdEscaper = strings.NewReplacer(`\`, `\\`, "|", `\|`, "<", "&lt;", ">", "&gt;", "&", "&amp;",
	"`", "\\`", "[", `\[`, "]", `\]`, "_", `\_`, "*", `\*`, "\r", " ", "\n", " ")

func mdEscape(s string) string { return mdEscaper.Replace(s) }

// mdCode makes s safe inside a one-backtick code span.
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "\n", " ", "\r", " ").Replace(s)
}
