package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestThresholdExitCodes: a run whose thresholds all pass exits 0, one
// that fails one exits ExitThresholds with the verdicts printed, a bad
// expression or a figure that cannot exist is a usage error before anything
// runs, a NOT VALID run whose thresholds pass exits ExitNotValid unless
// --allow-invalid says the run is a smoke test, and `report` checks the
// plan's thresholds again. Eight requests cannot back a P90, so every run
// here is NOT VALID and the rows pass --allow-invalid unless they test it.
func TestThresholdExitCodes(t *testing.T) {
	t.Parallel()
	srv := chatServer(t, 4, 0)
	base := []string{"run", "--url", srv.URL + "/v1", "--concurrency", "2", "--requests", "8",
		"--input-tokens", "8", "--output-tokens", "4"}
	tests := []struct {
		name       string
		thresholds []string
		wantCode   int
		wantOut    string // in stdout
		wantErr    string // in stderr
	}{
		// Every threshold holds: exit 0, verdicts listed under the table.
		{"pass", []string{"error_rate < 0.01", "output_tokens_per_s > 0"}, ExitOK, "all 2 thresholds passed", ""},
		// An impossible latency limit: exit 99, the failure listed and summed up.
		{"fail", []string{"error_rate < 0.01", "ttft_ms.p50 < 0"}, ExitThresholds, "FAIL  ttft_ms.p50 < 0", "1 of 2 thresholds failed: ttft_ms.p50 < 0 (metrics.ttft_ms.p50 = "},
		// Quiet: no table, but stderr still names the gate that broke.
		{"fail quietly", []string{"ttft_ms.p50 < 0", "-q"}, ExitThresholds, "", "1 of 1 thresholds failed: ttft_ms.p50 < 0 (metrics.ttft_ms.p50 = "},
		// A threshold on a figure no summary can hold is refused before the run, as k6 does.
		{"unknown metric", []string{"ttft.p42 < 1"}, ExitUsage, "", `no summary figure can match "ttft_ms.p42"`},
		// One on a figure this run may lack (a run has no steps) is judged after it, and fails.
		{"missing figure", []string{"steps.0.ttft_ms.p99 < 1"}, ExitThresholds, "no summary figure matches", "1 of 1 thresholds failed: steps.0.ttft_ms.p99 < 1 (no summary figure matches"},
		// A malformed expression is a usage error, reported before the run.
		{"bad expression", []string{"failure_rate < 2s"}, ExitUsage, "", "--threshold"},
		// The threshold language shared with --slo: a short name and a duration.
		{"duration", []string{"ttft.p50 < 1h"}, ExitOK, "PASS  ttft.p50 < 1h", ""},
		// A P99 of 8 requests is their maximum: the gate fails as unbacked, whatever its value.
		{"unbacked percentile", []string{"ttft.p99 < 1h"}, ExitThresholds, "rests on 8 samples", "ttft.p99 < 1h (metrics.ttft_ms.p99 = "},
		// Thresholds that hold on a run too small to back them: the gate fails.
		{"not valid", []string{"error_rate < 0.01", "strict"}, ExitNotValid, "all 1 thresholds passed", "NOT VALID"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		args := append(append([]string{}, base...), "--out", dir)
		strict := false
		for _, th := range tt.thresholds {
			if th == "strict" { // no --allow-invalid
				strict = true
				continue
			}
			if strings.HasPrefix(th, "-") { // a flag of the run, not a threshold
				args = append(args, th)
				continue
			}
			args = append(args, "--threshold", th)
		}
		if !strict {
			args = append(args, "--allow-invalid")
		}
		code, stdout, stderr := runCLI(t, args...)
		if code != tt.wantCode || !strings.Contains(stdout, tt.wantOut) || !strings.Contains(stderr, tt.wantErr) {
			t.Errorf("%s: exit %d (want %d)\nstdout: %s\nstderr: %s", tt.name, code, tt.wantCode, stdout, stderr)
			continue
		}
		if tt.wantCode == ExitUsage {
			if runs, _ := filepath.Glob(filepath.Join(dir, "*")); len(runs) != 0 {
				t.Errorf("%s: a usage error left run directories %v", tt.name, runs)
			}
			continue
		}
		runs, _ := filepath.Glob(filepath.Join(dir, "*"))
		if len(runs) != 1 {
			t.Fatalf("%s: %d run directories, want 1", tt.name, len(runs))
		}
		if code, _, _ := runCLI(t, "report", "-q", runs[0]); code != tt.wantCode {
			t.Errorf("%s: report exit %d, want %d", tt.name, code, tt.wantCode)
		}
	}
}
