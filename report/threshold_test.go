package report

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferload/inferload/record"
)

func TestWriteThresholds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		results []record.ThresholdResult
		want    string
	}{
		// No thresholds: nothing printed, so the summary table is unchanged.
		{"none", nil, ""},
		// All pass: each listed with its figure, then the tally.
		{"pass", []record.ThresholdResult{{Expr: "ttft_ms.p99 < 2000", Metric: "metrics.ttft_ms.p99", Value: 812.5, Passed: true}},
			"\nThresholds\n  PASS  ttft_ms.p99 < 2000                   metrics.ttft_ms.p99 = 812.5\n  all 1 thresholds passed\n"},
		// A failure and an unresolvable metric both count as failed; the latter shows why.
		{"fail", []record.ThresholdResult{
			{Expr: "error_rate < 0.01", Metric: "failure_rate", Value: 0.02},
			{Expr: "x.p99 < 1", Error: `no summary figure matches "x.p99"`}},
			"\nThresholds\n  FAIL  error_rate < 0.01                    failure_rate = 0.02\n  FAIL  x.p99 < 1                            no summary figure matches \"x.p99\"\n  2 of 2 thresholds failed\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := WriteThresholds(&b, tt.results); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
