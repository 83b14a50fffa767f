package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/inferload/inferload/analyze"
)

// WriteTruth writes the truth suite's answer as Markdown (TRUTH.md): one
// row per scenario, verdict beside truth, then the compare rates beside
// their targets.
func WriteTruth(w io.Writer, r analyze.TruthReport) error {
	var b bytes.Buffer
	mdRow(&b, []string{"scenario", "truth (by construction)", "verdict", "match"})
	mdRow(&b, mdRule(4))
	for _, row := range r.Rows {
		match := "yes"
		if !row.Match {
			match = "NO"
		}
		mdRow(&b, []string{row.Scenario, row.Truth, row.Verdict, match})
	}
	c := r.Compare
	fmt.Fprintf(&b, "\nCompare at the default settings, %d pairs per row, %d requests per run:\n\n", c.Pairs, c.Requests)
	fmt.Fprintf(&b, "- A/A false-regression rate: %.1f%% (target ≤ %.0f%%); over %d shorter pairs (%d requests): %.1f%%\n",
		100*c.FalseRegression, 100*analyze.TargetFalseRegression, c.ManyPairs, analyze.TruthMidRequests, 100*c.FalseRegressionMany)
	fmt.Fprintf(&b, "- planted 10%% TTFT P99 slowdown caught: %.1f%% (target ≥ %.0f%%)\n", 100*c.Flagged[0.10], 100*analyze.TargetDetect10)
	fmt.Fprintf(&b, "- planted 5%% / 20%% flagged: %.1f%% / %.1f%%\n", 100*c.Flagged[0.05], 100*c.Flagged[0.20])
	verdict := "all rows match their truth and every target is met"
	if !r.OK() {
		verdict = "NOT ALL ROWS MATCH OR A TARGET IS MISSED"
	}
	fmt.Fprintf(&b, "\n%s\n", strings.ToUpper(verdict[:1])+verdict[1:])
	_, err := w.Write(b.Bytes())
	return err
}
