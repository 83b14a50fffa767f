package analyze

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferload/inferload/record"
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
		{expr: "  error_rate<0.01 ", want: Threshold{Expr: "error_rate<0.01", Metric: "error_rate", Op: "<", Limit: 0.01}},
		// Two-character operators are not read as "<" then "=".
		{expr: "output_tokens_per_s >= 5e2", want: Threshold{Expr: "output_tokens_per_s >= 5e2", Metric: "output_tokens_per_s", Op: ">=", Limit: 500}},
		// A per-class path with a hyphenated class name and a negative limit.
		{expr: "classes.long-doc.ttft_ms.p95 != -1", want: Threshold{Expr: "classes.long-doc.ttft_ms.p95 != -1", Metric: "classes.long-doc.ttft_ms.p95", Op: "!=", Limit: -1}},
		// Equality with a zero count.
		{expr: "requests.failed == 0", want: Threshold{Expr: "requests.failed == 0", Metric: "requests.failed", Op: "==", Limit: 0}},
		// No operator at all.
		{expr: "ttft_ms.p99 2000", wantErr: "want METRIC OP NUMBER"},
		// Empty input.
		{expr: "", wantErr: "want METRIC OP NUMBER"},
		// Nothing before the operator.
		{expr: "< 5", wantErr: "no metric"},
		// Nothing after it.
		{expr: "ttft_ms.p99 <", wantErr: "no number"},
		// A unit suffix is not a number: limits are in the metric's own unit.
		{expr: "ttft_ms.p99 < 2s", wantErr: "not a finite number"},
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

func testFigures(t *testing.T) map[string]float64 {
	t.Helper()
	s := &record.Summary{SchemaVersion: 1, FailureRate: 0.02}
	s.Metrics.TTFT.P99 = 1500
	s.Metrics.TTFT.P95 = 900
	s.Metrics.E2E.P99 = 9000
	s.Throughput.OutputTokensPerS = 640
	figs, err := Figures(s)
	if err != nil {
		t.Fatal(err)
	}
	// What a per-class breakdown adds: the same shape one level down.
	figs["classes.short.metrics.ttft_ms.p95"] = 250
	figs["classes.short.metrics.ttft_ms.p99"] = 310
	figs["classes.long.metrics.ttft_ms.p95"] = 2500
	return figs
}

func TestResolve(t *testing.T) {
	t.Parallel()
	figs := testFigures(t)
	tests := []struct {
		metric   string
		wantPath string
		wantVal  float64
		wantErr  string
	}{
		// Exact path.
		{metric: "metrics.ttft_ms.p99", wantPath: "metrics.ttft_ms.p99", wantVal: 1500},
		// Short form: the overall figure wins over the per-class ones.
		{metric: "ttft_ms.p99", wantPath: "metrics.ttft_ms.p99", wantVal: 1500},
		// A top-level section can be left out.
		{metric: "output_tokens_per_s", wantPath: "throughput.output_tokens_per_s", wantVal: 640},
		// error_rate is an alias of failure_rate.
		{metric: "error_rate", wantPath: "failure_rate", wantVal: 0.02},
		// A per-class figure, with "metrics" left out.
		{metric: "classes.short.ttft_ms.p95", wantPath: "classes.short.metrics.ttft_ms.p95", wantVal: 250},
		// A boolean reads as 0 or 1.
		{metric: "interrupted", wantPath: "interrupted", wantVal: 0},
		// A class that does not exist resolves to nothing.
		{metric: "classes.medium.ttft_ms.p95", wantErr: "no summary figure matches"},
		// A bare percentile is ambiguous and says so.
		{metric: "p99", wantErr: "ambiguous"},
		// A misspelt metric.
		{metric: "ttft.p99", wantErr: "no summary figure matches"},
	}
	for _, tt := range tests {
		path, v, err := Resolve(figs, tt.metric)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Resolve(%q) = %s, %v, %v; want error containing %q", tt.metric, path, v, err, tt.wantErr)
			}
			continue
		}
		if err != nil || path != tt.wantPath || v != tt.wantVal {
			t.Errorf("Resolve(%q) = %s, %v, %v; want %s, %v", tt.metric, path, v, err, tt.wantPath, tt.wantVal)
		}
	}
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	s := &record.Summary{SchemaVersion: 1, FailureRate: 0.02}
	s.Metrics.TTFT.P99 = 1500
	s.Throughput.OutputTokensPerS = 640
	ths, err := ParseThresholds([]string{
		"ttft_ms.p99 < 2000",              // passes
		"error_rate < 0.01",               // fails: 2% errors
		"output_tokens_per_s > 500",       // passes
		"classes.short.ttft_ms.p95 < 300", // no classes in this summary: fails with a reason
		"ttft_ms.p99 <= 1500",             // boundary: passes
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Evaluate(ths, s)
	if err != nil {
		t.Fatal(err)
	}
	want := []record.ThresholdResult{
		{Expr: "ttft_ms.p99 < 2000", Metric: "metrics.ttft_ms.p99", Value: 1500, Passed: true},
		{Expr: "error_rate < 0.01", Metric: "failure_rate", Value: 0.02},
		{Expr: "output_tokens_per_s > 500", Metric: "throughput.output_tokens_per_s", Value: 640, Passed: true},
		{Expr: "classes.short.ttft_ms.p95 < 300", Error: `no summary figure matches "classes.short.ttft_ms.p95" (see docs/summary.md)`},
		{Expr: "ttft_ms.p99 <= 1500", Metric: "metrics.ttft_ms.p99", Value: 1500, Passed: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Evaluate (-want +got):\n%s", diff)
	}
	if n := Failed(got); n != 2 {
		t.Errorf("Failed = %d, want 2", n)
	}
}

func TestParseThresholdsNamesPosition(t *testing.T) {
	t.Parallel()
	_, err := ParseThresholds([]string{"ttft_ms.p99 < 1", "bogus"})
	if err == nil || !strings.HasPrefix(err.Error(), "threshold 2:") {
		t.Fatalf("err = %v, want it to name threshold 2", err)
	}
}

// FuzzThreshold: no input panics, and whatever parses re-parses from its
// own Expr to the same threshold.
func FuzzThreshold(f *testing.F) {
	for _, s := range []string{"ttft_ms.p99 < 2000", "error_rate<0.01", "a.b.c >= -1e3", "x != 0", "<", "a<<1", "a < 1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err != nil {
			return
		}
		again, err := ParseThreshold(th.Expr)
		if err != nil || again != th {
			t.Fatalf("reparse of %q: %+v, %v; want %+v", th.Expr, again, err, th)
		}
		figs := map[string]float64{th.Metric: 1}
		if _, _, err := Resolve(figs, th.Metric); err != nil && aliases[th.Metric] == "" {
			t.Fatalf("Resolve of its own metric %q: %v", th.Metric, err)
		}
	})
}
