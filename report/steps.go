package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/inferload/inferload/record"
)

// stepColumns head the steps table. Latencies are milliseconds; "ok" is
// the step's validity verdict, and an invalid step's reasons follow the
// table, so it is never read as a measurement.
var stepColumns = []string{"step", "load", "req/s", "out tok/s", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "E2E p50", "E2E p99", "fail %", "goodput", "ok"}

// writeSteps writes what an experiment adds to a run: the steps table,
// the knee, a capacity search's answer, a soak's drift. It writes nothing
// for a plain run.
func writeSteps(b *bytes.Buffer, s *record.Summary) {
	writeOperating(b, s.Operating)
	writeStepTable(b, s)
	writeCapacity(b, s.Capacity)
	writeSoak(b, s.Soak)
}

// writeOperating writes a sweep's recommended operating point, its
// answer, first.
func writeOperating(b *bytes.Buffer, o *record.OperatingPoint) {
	if o == nil {
		return
	}
	fmt.Fprintf(b, "%-*s%s\n", labelWidth, "Run at", o.Reason)
}

// writeStepTable writes one row per stage of a staged run or sweep
// (throughput and failure rate against load), the reasons of any step
// that is invalid or weak, and the knee.
func writeStepTable(b *bytes.Buffer, s *record.Summary) {
	if len(s.Steps) == 0 {
		return
	}
	b.WriteString("\nSteps\n")
	for _, c := range stepColumns {
		fmt.Fprintf(b, "%*s", stepWidth(c), c)
	}
	b.WriteByte('\n')
	for i := range s.Steps {
		writeStepRow(b, &s.Steps[i])
	}
	b.WriteString("  " + unbackedNote + "\n")
	for _, st := range s.Steps {
		if len(st.Validity.Reasons) > 0 {
			fmt.Fprintf(b, "  step %d: %s\n", st.Index, strings.Join(st.Validity.Reasons, "; "))
		}
	}
	for _, st := range s.Steps {
		if a := st.Accuracy; a != nil {
			fmt.Fprintf(b, "  step %d accuracy: %s\n", st.Index, accuracyText(a))
		}
	}
	if k := s.Knee; k != nil {
		fmt.Fprintf(b, "\n%-*s%s\n", labelWidth, "Knee", k.Reason)
	}
}

// writeSoak writes one verdict line per windowed figure, each with its
// estimated change and interval: drifted ones marked "!", those the soak
// was too short to test "?".
func writeSoak(b *bytes.Buffer, s *record.Soak) {
	if s == nil {
		return
	}
	fmt.Fprintf(b, "\nDrift over %d windows of %gs\n", len(s.Windows), s.WindowS)
	for _, d := range s.Drift {
		mark := "  "
		switch {
		case !d.Tested:
			mark = "? "
		case d.Drifted:
			mark = "! "
		}
		fmt.Fprintf(b, "%s%s\n", mark, d.Verdict)
	}
}

// writeCapacity writes a capacity search's answer and every probe's
// verdict.
func writeCapacity(b *bytes.Buffer, c *record.Capacity) {
	if c == nil {
		return
	}
	fmt.Fprintf(b, "\n%-*s%s\n", labelWidth, "Capacity", c.Reason)
	for _, p := range c.Probes {
		verdict := "fail"
		switch {
		case p.Passed:
			verdict = "pass"
		case p.NoVerdict:
			verdict = "no verdict"
		}
		if p.Confirmation {
			verdict = "confirmation " + verdict
		}
		fmt.Fprintf(b, "  step %d at %g: %s: %s\n", p.Step, p.Load, verdict, strings.Join(p.Reasons, "; "))
	}
}

func stepWidth(col string) int { return max(len(col)+2, cellWidth) }

func writeStepRow(b *bytes.Buffer, st *record.Step) {
	m := st.Metrics
	cells := []string{
		fmt.Sprint(st.Index), loadCell(st),
		fmt.Sprintf("%.2f", st.Throughput.RequestsPerS), fmt.Sprintf("%.1f", st.Throughput.OutputTokensPerS),
		msCell(m.TTFT, m.TTFT.P50, backs(st, "ttft", "p50")), msCell(m.TTFT, m.TTFT.P99, backs(st, "ttft", "p99")),
		msCell(m.ITL, m.ITL.P50, backs(st, "itl", "p50")), msCell(m.ITL, m.ITL.P99, backs(st, "itl", "p99")),
		msCell(m.E2E, m.E2E.P50, backs(st, "e2e", "p50")), msCell(m.E2E, m.E2E.P99, backs(st, "e2e", "p99")),
		fmt.Sprintf("%.2f", 100*st.FailureRate), fmt.Sprintf("%.2f", st.GoodputPerS), validCell(st.Validity),
	}
	for i, c := range cells {
		fmt.Fprintf(b, "%*s", stepWidth(stepColumns[i]), c)
	}
	b.WriteByte('\n')
}

// loadCell is "8u" for users, "2.5/s" for a rate; a ramp shows "4→8u".
func loadCell(st *record.Step) string {
	unit := "u"
	if st.Mode == record.ModeOpen {
		unit = "/s"
	}
	if st.Kind == record.StepRamp {
		return fmt.Sprintf("%g→%g%s", st.From, st.Target, unit)
	}
	return fmt.Sprintf("%g%s", st.Target, unit)
}

// msCell shows a percentile only when the metric has values, and marks it
// with "*" when its sample count does not back it (a P99 from 200 samples).
func msCell(st record.Stats, v float64, backed bool) string {
	if st.Count == 0 {
		return "-"
	}
	if !backed {
		return formatMS(v) + "*"
	}
	return formatMS(v)
}

// percentileOrder ranks the names Validity.Percentiles holds.
var percentileOrder = map[string]int{"none": 0, "p50": 1, "p90": 2, "p95": 3, "p99": 4, "p999": 5}

// backs reports whether the step's sample count for metric backs pct.
func backs(st *record.Step, metric, pct string) bool {
	return backedBy(st.Validity.Percentiles, metric, pct)
}

// backedBy reports whether a validity's Percentiles (the highest
// percentile each metric's sample count backs) back metric's pct.
func backedBy(percentiles map[string]string, metric, pct string) bool {
	got, ok := percentiles[metric]
	return ok && backsPercentile(got, pct)
}

// backsPercentile reports whether backed, the highest percentile a count
// backs (analyze.Backed), reaches pct.
func backsPercentile(backed, pct string) bool {
	return percentileOrder[backed] >= percentileOrder[pct]
}

// unbackedNote explains msCell's "*".
const unbackedNote = "* too few samples for that percentile at 95% confidence"

func validCell(v record.Validity) string {
	if v.Valid {
		return "yes"
	}
	return "NO"
}
