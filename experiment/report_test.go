package experiment

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/summary"
)

// TestRunWritesReportAndThresholds: a run leaves report.html beside
// summary.json, with its thresholds checked; a rebuild redraws both
// byte for byte.
func TestRunWritesReportAndThresholds(t *testing.T) {
	t.Parallel()
	srv := streamServer(t, 4, time.Millisecond)
	res := runPlan(t, fmt.Sprintf(`
name: gated
target:
  url: %s/v1
  model: '<script>alert(1)</script>'
  api_key_env: TEST_KEY
load: {concurrency: 2, requests: 12}
workload: {input_tokens: "16", output_tokens: "4"}
thresholds:
  - error_rate < 0.01
  - ttft_ms.p99 < 0.001
  - steps.0.ttft_ms.p99 < 1
`, srv.URL))
	got := res.Summary.Thresholds
	// The run is too short to back a P99: that gate fails as unbacked.
	unbacked := fmt.Sprintf("metrics.ttft_ms.p99 = %.4g rests on %d samples, too few to back a p99 at 95%% confidence (299 needed): lengthen the run, or gate the %s its samples back (docs/report.md, \"How long a CI run must be\")",
		res.Summary.Metrics.TTFT.P99, res.Summary.Metrics.TTFT.Count, analyze.Backed(res.Summary.Metrics.TTFT.Count, analyze.DefaultConfidence))
	want := []record.ThresholdResult{
		{Expr: "error_rate < 0.01", Metric: "failure_rate", Value: 0, Passed: true},
		{Expr: "ttft_ms.p99 < 0.001", Metric: "metrics.ttft_ms.p99", Value: res.Summary.Metrics.TTFT.P99, Error: unbacked},
		// A figure a staged run would have: allowed at start, missing after.
		{Expr: "steps.0.ttft_ms.p99 < 1", Error: `no summary figure matches "steps.0.ttft_ms.p99" (see docs/summary.md)`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("thresholds (-want +got):\n%s", diff)
	}
	html, err := os.ReadFile(filepath.Join(res.Dir, rundir.Report))
	if err != nil {
		t.Fatalf("run directory lacks %s: %v", rundir.Report, err)
	}
	for _, want := range []string{`<section id="thresholds">`, `<section id="heatmap">`, `<section id="timeline">`, "&lt;script&gt;alert(1)&lt;/script&gt;"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %s", want)
		}
	}
	if strings.Contains(string(html), "<script>alert(1)") {
		t.Errorf("report.html carries the model name unescaped")
	}
	sumRaw, err := os.ReadFile(filepath.Join(res.Dir, rundir.Summary))
	if err != nil {
		t.Fatal(err)
	}
	rb, err := summary.Rebuild(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, rb.Summary.Thresholds); diff != "" {
		t.Errorf("rebuilt thresholds (-want +got):\n%s", diff)
	}
	for name, before := range map[string][]byte{rundir.Summary: sumRaw, rundir.Report: html} {
		after, err := os.ReadFile(filepath.Join(res.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Errorf("rebuilt %s differs from the live run's", name)
		}
	}
}
