package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/inferload/inferload/analyze"
)

// WriteRepeats writes, for a terminal, each figure over repeated runs of
// one scenario: its mean, the confidence interval of the mean (Student's
// t on the run values), the run-to-run spread and every run's value.
func WriteRepeats(w io.Writer, dirs []string, figures []analyze.RepeatFigure) error {
	var b bytes.Buffer
	names := make([]string, len(dirs))
	for i, d := range dirs {
		names[i] = printable(filepath.Base(d))
	}
	fmt.Fprintf(&b, "\nrepeats: %d runs of one scenario (%s)\n", len(dirs), strings.Join(names, ", "))
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

// WriteRepeatsJSON writes the same as one JSON document: the runs'
// directories and the figures.
func WriteRepeatsJSON(w io.Writer, dirs []string, figures []analyze.RepeatFigure) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(struct {
		Runs    []string               `json:"runs"`
		Figures []analyze.RepeatFigure `json:"figures"`
	}{dirs, figures}); err != nil {
		return fmt.Errorf("encode repeats: %w", err)
	}
	return nil
}
