package report

import (
	"bytes"
	"fmt"
	"io"

	"github.com/inferload/inferload/record"
)

// WriteThresholds lists each threshold's verdict, one per line, then a
// count of failures; nothing when there are none.
func WriteThresholds(w io.Writer, results []record.ThresholdResult) error {
	if len(results) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("\nThresholds\n")
	failed := 0
	for _, r := range results {
		mark := "PASS"
		if !r.Passed {
			mark = "FAIL"
			failed++
		}
		detail := fmt.Sprintf("%s = %.4g", r.Metric, r.Value)
		if r.Error != "" {
			detail = r.Error
		}
		fmt.Fprintf(&b, "  %s  %-36s %s\n", mark, r.Expr, detail)
	}
	if failed > 0 {
		fmt.Fprintf(&b, "  %d of %d thresholds failed\n", failed, len(results))
	} else {
		fmt.Fprintf(&b, "  all %d thresholds passed\n", len(results))
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write thresholds: %w", err)
	}
	return nil
}
