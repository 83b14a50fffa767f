package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
)

// WriteRepeats writes, for a terminal, each figure over repeated runs of
// one scenario: its mean, the confidence interval of the mean (Student's
// t on the run values), the run-to-run spread and every run's value.
func WriteRepeats(w io.Writer, dirs []string, figures []analyze.RepeatFigure, check *analyze.PrecisionCheck, most int) error {
	var b bytes.Buffer
	names := make([]string, len(dirs))
	for i, d := range dirs {
		names[i] = printable(filepath.Base(d))
	}
	fmt.Fprintf(&b, "\nrepeats: %d runs of one scenario (%s)\n", len(dirs), strings.Join(names, ", "))
	if check != nil {
		writePrecision(&b, *check, most)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tmean\t95% CI of the mean\trun-to-run CV\tper run")
	for _, f := range figures {
		format := compareFormatter(f.Metric)
		per := make([]string, len(f.Values))
		for i, v := range f.Values {
			per[i] = format(v, false)
		}
		fmt.Fprintf(tw, "%s\t%s\t[%s, %s]\t%.1f%%\t%s\n", f.Metric, format(f.Mean, false), format(f.Low, false), format(f.High, false),
			f.CV*100, strings.Join(per, ", "))
	}
	tw.Flush()
	fmt.Fprintln(&b, "\nThe interval is the mean's, from the spread between runs (Student's t): it holds the run-to-run variance a single run cannot show. A CV of a few percent is a quiet host; tens of percent, a busy one, where only repeats tell a change from noise (docs/compare.md#run-to-run-variance).")
	_, err := w.Write(b.Bytes())
	return err
}

// writePrecision says whether the repeats stopped on --precision, and
// otherwise which figures stayed wide after the most runs allowed.
func writePrecision(b *bytes.Buffer, c analyze.PrecisionCheck, most int) {
	widths := make([]string, len(c.Widths))
	var wide []string
	for i, w := range c.Widths {
		widths[i] = fmt.Sprintf("%s ±%s", w.Metric, relPercent(w.Rel))
		if w.Rel > c.Rel {
			wide = append(wide, widths[i])
		}
	}
	switch {
	case c.Met:
		fmt.Fprintf(b, "precision: stopped after %d of at most %d runs: every watched interval is within ±%s of its mean (%s)\n\n",
			c.Runs, most, relPercent(c.Rel), strings.Join(widths, ", "))
	case len(c.Widths) == 0:
		fmt.Fprintf(b, "precision: not met after %d runs: the runs have none of the watched figures\n\n", c.Runs)
	default:
		fmt.Fprintf(b, "precision: NOT met after %d runs (the most allowed): still wider than ±%s: %s; more runs, a longer run or a quieter host narrow it\n\n",
			c.Runs, relPercent(c.Rel), strings.Join(wide, ", "))
	}
}

// relPercent prints a relative width as a percentage.
func relPercent(v float64) string {
	if v >= 10 {
		return "over 1000%"
	}
	return strconv.FormatFloat(v*100, 'f', 1, 64) + "%"
}

// WriteRepeatsJSON writes the same as one JSON document: the runs'
// directories, the figures, and the precision rule's last answer when
// --precision was given.
func WriteRepeatsJSON(w io.Writer, dirs []string, figures []analyze.RepeatFigure, check *analyze.PrecisionCheck) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(struct {
		Runs      []string                `json:"runs"`
		Figures   []analyze.RepeatFigure  `json:"figures"`
		Precision *analyze.PrecisionCheck `json:"precision,omitempty"`
	}{dirs, figures, check}); err != nil {
		return fmt.Errorf("encode repeats: %w", err)
	}
	return nil
}

// WriteStepRepeats writes a repeated sweep or search for a terminal: each
// run's verdicts side by side with how many runs agree, then per step
// each figure's mean over the runs, the interval of the mean, the
// run-to-run spread and every run's value.
func WriteStepRepeats(w io.Writer, dirs []string, r analyze.SteppedRepeats) error {
	var b bytes.Buffer
	names := make([]string, len(dirs))
	for i, d := range dirs {
		names[i] = printable(filepath.Base(d))
	}
	fmt.Fprintf(&b, "\nrepeats: %d runs of one experiment (%s)\n\n", len(dirs), strings.Join(names, ", "))
	mode := record.ModeClosed
	if len(r.Steps) > 0 {
		mode = r.Steps[len(r.Steps)-1].Mode
	}
	for _, v := range []struct {
		label string
		runs  []*float64
	}{{"Run at", r.Verdicts.Operating}, {"Knee", r.Verdicts.Knee}, {"Capacity", r.Verdicts.Capacity}} {
		if line := verdictRunsLine(v.runs, mode); line != "" {
			row(&b, v.label, line)
		}
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nstep\tload\tfigure\tmean\t95% CI of the mean\trun-to-run CV\tper run")
	for _, st := range r.Steps {
		for _, f := range st.Figures {
			format := compareFormatter(f.Metric)
			per := make([]string, len(f.Values))
			for i, v := range f.Values {
				per[i] = format(v, false)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t[%s, %s]\t%.1f%%\t%s\n", st.Index, record.LoadText(st.Load, st.Mode), f.Metric,
				format(f.Mean, false), format(f.Low, false), format(f.High, false), f.CV*100, strings.Join(per, ", "))
		}
	}
	tw.Flush()
	fmt.Fprintln(&b, "\nA verdict that differs between runs of one scenario is inside the host's and the server's run-to-run noise: trust the one most runs agree on, or lengthen the steps (docs/experiments.md#repeats).")
	_, err := w.Write(b.Bytes())
	return err
}

// verdictRunsLine is one verdict over the runs ("24, 24, 32 users: 24
// users in 2 of 3 runs", "none" where a run found none); "" for a verdict
// the experiment does not draw.
func verdictRunsLine(runs []*float64, mode string) string {
	if len(runs) == 0 {
		return ""
	}
	var parts []string
	counts := map[string]int{}
	for _, v := range runs {
		text := "none"
		if v != nil {
			text = record.LoadText(*v, mode)
		}
		parts = append(parts, text)
		counts[text]++
	}
	best, n := "", 0
	for _, p := range parts { // first most common, in run order
		if counts[p] > n {
			best, n = p, counts[p]
		}
	}
	return fmt.Sprintf("%s: %s in %d of %d runs", strings.Join(parts, ", "), best, n, len(runs))
}

// WriteStepRepeatsJSON writes the same as one JSON document.
func WriteStepRepeatsJSON(w io.Writer, dirs []string, r analyze.SteppedRepeats) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(struct {
		Runs []string `json:"runs"`
		analyze.SteppedRepeats
	}{dirs, r}); err != nil {
		return fmt.Errorf("encode repeats: %w", err)
	}
	return nil
}
