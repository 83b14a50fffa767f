package analyze

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferload/inferload/record"
)

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
	s.Metrics.TTFT.P99, s.Metrics.TTFT.Count = 1500, 1000
	s.Throughput.OutputTokensPerS = 640
	ths, err := record.ParseThresholds([]string{
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

// TestEvaluateUnbacked: a gate on a percentile its own sample count does
// not back at 95% confidence fails, whatever its value, with the count,
// the need and the percentile the samples do back; one they back is
// judged on its value. The count is the one beside the figure: a class's
// or a step's own, not the run's.
func TestEvaluateUnbacked(t *testing.T) {
	t.Parallel()
	s := &record.Summary{SchemaVersion: 1}
	s.Metrics.TTFT = record.Stats{Count: 320, P90: 400, P99: 900}
	chat := &record.Breakdown{}
	chat.Metrics.TTFT = record.Stats{Count: 32, P90: 380, P99: 410}
	s.Classes = map[string]*record.Breakdown{"chat": chat}
	s.Steps = []record.Step{{Index: 1, Metrics: record.Metrics{E2E: record.Stats{Count: 3, P50: 100}}}}
	tests := []struct {
		expr   string
		passed bool
		reason string // "" for a figure judged on its value
	}{
		{"ttft_ms.p99 < 1000", true, ""}, // 320 samples back a P99 (299)
		{"classes.chat.ttft_ms.p99 < 1000", false, "classes.chat.metrics.ttft_ms.p99 = 410 rests on 32 samples, too few to back a p99 at 95% confidence (299 needed): lengthen the run, or gate the p90 its samples back"},
		{"classes.chat.ttft_ms.p90 < 1000", true, ""}, // 32 back a P90 (29)
		{"classes.chat.ttft_ms.p90 < 100", false, ""}, // backed, and over its limit
		{"steps.0.e2e_ms.p50 < 1000", false, "rests on 3 samples, too few to back a p50 at 95% confidence (5 needed): lengthen the run ("}, // backs none
		{"classes.chat.ttft_ms.max < 1000", true, ""}, // not a percentile
	}
	for _, tt := range tests {
		ths, err := record.ParseThresholds([]string{tt.expr})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Evaluate(ths, s)
		if err != nil {
			t.Fatal(err)
		}
		r := got[0]
		if r.Passed != tt.passed || (tt.reason == "") != (r.Error == "") || !strings.Contains(r.Error, tt.reason) {
			t.Errorf("%s: passed %v, error %q; want passed %v, error with %q", tt.expr, r.Passed, r.Error, tt.passed, tt.reason)
		}
	}
}

// FuzzThreshold: no input panics, and whatever parses re-parses from its
// own Expr to the same threshold.
func FuzzThreshold(f *testing.F) {
	for _, s := range []string{"ttft_ms.p99 < 2000", "error_rate<0.01", "a.b.c >= -1e3", "x != 0", "<", "a<<1", "a < 1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := record.ParseThreshold(s)
		if err != nil {
			return
		}
		again, err := record.ParseThreshold(th.Expr)
		if err != nil || again != th {
			t.Fatalf("reparse of %q: %+v, %v; want %+v", th.Expr, again, err, th)
		}
		figs := map[string]float64{th.Metric: 1}
		if _, _, err := Resolve(figs, th.Metric); err != nil {
			t.Fatalf("Resolve of its own metric %q: %v", th.Metric, err)
		}
	})
}
