package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"

	"github.com/inferload/inferload/analyze"
)

// WriteCompareHTML writes a comparison as a self-contained page in the
// style of report.html (same template, styles and escaping): the verdict
// with one line per regression limit, the table of figures, and the
// environment fields that differ. Like report.html it opens from a file
// with no network.
func WriteCompareHTML(w io.Writer, c *analyze.Comparison) error {
	if c == nil {
		return fmt.Errorf("compare html: no comparison")
	}
	p := &page{
		Title:    "inferload compare: " + c.Current + " vs " + c.Baseline,
		Subtitle: compareHeadline(c),
		CSS:      template.CSS(uplotCSS + reportCSS),
		JS:       template.JS(uplotJS + "\n" + reportJS),
		Sections: []*section{compareVerdictSection(c), compareFiguresSection(c), compareEnvSection(c)},
		Data:     pageData{Charts: []chart{}, Marks: []annotation{}},
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return fmt.Errorf("compare html: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write compare html: %w", err)
	}
	return nil
}

func compareVerdictSection(c *analyze.Comparison) *section {
	answer := "PASS"
	if c.Regressions > 0 {
		answer = "REGRESSION"
	}
	sec := &section{ID: "compare-verdict", Title: "Verdict",
		Help: "A figure regresses when it is worse, the interval of its change excludes 0 (significant), and the change is beyond its limit. A regression makes `inferload compare` exit with code 98.",
		Cards: []card{
			{"Verdict", answer, fmt.Sprintf("%d of %d limits exceeded", c.Regressions, len(c.Limits))},
			{"Baseline", c.Baseline, ""},
			{"Current", c.Current, ""},
		}}
	for i := range c.Deltas {
		d := &c.Deltas[i]
		if d.Limit == "" {
			continue
		}
		cells := compareCells(d)
		sec.Verdicts = append(sec.Verdicts, verdict{Passed: !d.Regression,
			Expr:   d.Metric + " no more than " + d.Limit + " worse",
			Detail: fmt.Sprintf("%s → %s: %s, CI %s, %s", cells[1], cells[2], cells[3], cells[4], d.Change)})
	}
	for _, w := range c.Warnings {
		sec.Notes = append(sec.Notes, "Warning: "+w)
	}
	for _, l := range c.UnusedLimits {
		sec.Notes = append(sec.Notes, "Limit "+l+" names a figure one of the runs does not have; it checked nothing.")
	}
	return sec
}

func compareFiguresSection(c *analyze.Comparison) *section {
	t := table{Head: compareHead}
	for i := range c.Deltas {
		t.Rows = append(t.Rows, compareCells(&c.Deltas[i]))
	}
	return &section{ID: "compare-figures", Title: "Figures", Help: compareMethod(c), Tables: []table{t}}
}

func compareEnvSection(c *analyze.Comparison) *section {
	sec := &section{ID: "compare-environment", Title: "Environment changes",
		Help: "env.json fields whose values differ between the runs: a changed model, server version or GPU explains many regressions."}
	if len(c.Env) == 0 {
		sec.Notes = []string{"No env.json field differs."}
		return sec
	}
	t := table{Head: []string{"field", "baseline", "current"}}
	for _, e := range c.Env {
		t.Rows = append(t.Rows, []string{e.Field, envSide(e, "baseline"), envSide(e, "current")})
	}
	sec.Tables = []table{t}
	return sec
}

// WriteCompareHTMLFile writes the comparison page to path, replacing it
// only once the whole page is written (a temporary file is renamed over
// it), so a failed write never leaves half a page.
func WriteCompareHTMLFile(path string, c *analyze.Comparison) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".compare-*.html")
	if err != nil {
		return fmt.Errorf("compare html: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := WriteCompareHTML(tmp, c); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("compare html: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("compare html: %w", err)
	}
	return nil
}

// embeddedCompareVerdict and embeddedCompareFigures put a comparison with a
// baseline into the run's own report.html, after its headline; the
// environment changes join them when there are any.
func embeddedCompareVerdict(in *HTMLInput) *section {
	if in.Comparison == nil {
		return nil
	}
	sec := compareVerdictSection(in.Comparison)
	sec.Title = "Compared with " + in.Comparison.Baseline
	if env := compareEnvSection(in.Comparison); env != nil {
		sec.Tables = append(sec.Tables, env.Tables...)
	}
	return sec
}

func embeddedCompareFigures(in *HTMLInput) *section {
	if in.Comparison == nil {
		return nil
	}
	sec := compareFiguresSection(in.Comparison)
	sec.Title = "Figures against the baseline"
	return sec
}
