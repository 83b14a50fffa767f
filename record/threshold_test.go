package record

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseThreshold(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr    string
		want    Threshold
		wantErr string // substring of the error; "" means it parses
	}{
		// The first example: a percentile under a limit.
		{expr: "ttft_ms.p99 < 2000", want: Threshold{Expr: "ttft_ms.p99 < 2000", Metric: "ttft_ms.p99", Op: "<", Limit: 2000}},
		// Spaces are optional and surrounding space is trimmed from Expr.
		{expr: "  error_rate<0.01 ", want: Threshold{Expr: "error_rate<0.01", Metric: "failure_rate", Op: "<", Limit: 0.01}}, // an alias: summary.json says failure_rate
		// Two-character operators are not read as "<" then "=".
		{expr: "output_tokens_per_s >= 5e2", want: Threshold{Expr: "output_tokens_per_s >= 5e2", Metric: "output_tokens_per_s", Op: ">=", Limit: 500}},
		// A per-class path with a hyphenated class name and a negative limit.
		{expr: "classes.long-doc.ttft_ms.p95 != -1", want: Threshold{Expr: "classes.long-doc.ttft_ms.p95 != -1", Metric: "classes.long-doc.ttft_ms.p95", Op: "!=", Limit: -1}},
		// Equality with a zero count.
		{expr: "requests.failed == 0", want: Threshold{Expr: "requests.failed == 0", Metric: "requests.failed", Op: "==", Limit: 0}},
		// No operator at all.
		{expr: "ttft_ms.p99 2000", wantErr: "want METRIC OP LIMIT"},
		// Empty input.
		{expr: "", wantErr: "want METRIC OP LIMIT"},
		// Nothing before the operator.
		{expr: "< 5", wantErr: "no metric"},
		// Nothing after it.
		{expr: "ttft_ms.p99 <", wantErr: "no limit"},
		// A duration is read in the metric's own unit (ms here, s for a
		// figure ending in _s), and the short latency names are
		// summary.json's: one language with the SLOs of find-capacity.
		{expr: "ttft_ms.p99 < 2s", want: Threshold{Expr: "ttft_ms.p99 < 2s", Metric: "ttft_ms.p99", Op: "<", Limit: 2000}},
		{expr: "ttft.p99 <= 1.5s", want: Threshold{Expr: "ttft.p99 <= 1.5s", Metric: "ttft_ms.p99", Op: "<=", Limit: 1500}},
		// A reasoning model's TTFO and TTFR have short names too.
		{expr: "ttfo.p99 < 5s", want: Threshold{Expr: "ttfo.p99 < 5s", Metric: "ttfo_ms.p99", Op: "<", Limit: 5000}},
		{expr: "ttfr.p50 < 200ms", want: Threshold{Expr: "ttfr.p50 < 200ms", Metric: "ttfr_ms.p50", Op: "<", Limit: 200}},
		{expr: "classes.short.tpot.mean < 80ms", want: Threshold{Expr: "classes.short.tpot.mean < 80ms", Metric: "classes.short.tpot_ms.mean", Op: "<", Limit: 80}},
		{expr: "steps.0.window_s >= 2m", want: Threshold{Expr: "steps.0.window_s >= 2m", Metric: "steps.0.window_s", Op: ">=", Limit: 120}},
		// A class named like a figure stays a class: no statistic follows.
		{expr: "classes.ttft.ttft_ms.p99 < 1", want: Threshold{Expr: "classes.ttft.ttft_ms.p99 < 1", Metric: "classes.ttft.ttft_ms.p99", Op: "<", Limit: 1}},
		// A percentage is a fraction.
		{expr: "failure_rate < 1%", want: Threshold{Expr: "failure_rate < 1%", Metric: "failure_rate", Op: "<", Limit: 0.01}},
		// A duration on a figure without a time unit is refused.
		{expr: "failure_rate < 2s", wantErr: "has no time unit"},
		{expr: "failure_rate < %", wantErr: "not a finite percentage"},
		// NaN and infinities would make a gate that always or never passes.
		{expr: "ttft_ms.p99 < NaN", wantErr: "not a finite number"},
		{expr: "ttft_ms.p99 < +Inf", wantErr: "not a finite number"},
		// Hex floats and underscores are Go syntax, not plan syntax.
		{expr: "ttft_ms.p99 < 0x10", wantErr: "not a finite number"},
		// An empty path segment.
		{expr: "metrics..p99 < 1", wantErr: "empty path segment"},
		// Markup in the metric name is refused (it is echoed in reports).
		{expr: "<script> < 1", wantErr: "no metric"},
		{expr: "a\"b < 1", wantErr: "not allowed"},
		// Two comparisons in one expression.
		{expr: "a < 1 < 2", wantErr: "not a finite number"},
		// Absurdly long input is refused up front.
		{expr: strings.Repeat("a", 300) + " < 1", wantErr: "longer than"},
	}
	for _, tt := range tests {
		got, err := ParseThreshold(tt.expr)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrThreshold) {
				t.Errorf("ParseThreshold(%q) error = %v, want ErrThreshold containing %q", tt.expr, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseThreshold(%q): %v", tt.expr, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseThreshold(%q) (-want +got):\n%s", tt.expr, diff)
		}
	}
}

func TestParseThresholdsNamesPosition(t *testing.T) {
	t.Parallel()
	_, err := ParseThresholds([]string{"ttft_ms.p99 < 1", "bogus"})
	if err == nil || !strings.HasPrefix(err.Error(), "threshold 2:") {
		t.Fatalf("err = %v, want it to name threshold 2", err)
	}
}
