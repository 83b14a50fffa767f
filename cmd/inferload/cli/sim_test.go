package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

func TestSimListAndReference(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		want string // in stdout, or stderr for errors
	}{
		// every preset is listed with its description
		{"list", []string{"sim", "--list-profiles"}, ExitOK, "a100-7b"},
		// the reference table prints beside the published figures
		{"reference", []string{"sim", "--reference"}, ExitOK, "| users |"},
		{"reference by its old name", []string{"sim", "--calibrate"}, ExitOK, "| users |"},
		// an unknown profile is a usage error listing the valid names
		{"bad profile", []string{"sim", "--profile", "nope"}, ExitUsage, "h100-8b"},
		// a bad fault spec names the fault
		{"bad faults", []string{"sim", "--faults", "explode=1"}, ExitUsage, "explode"},
		// a non-positive speedup is refused
		{"bad speedup", []string{"sim", "--speedup", "0"}, ExitUsage, "speedup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("exit %d, stdout %q stderr %q: want exit %d mentioning %q", code, stdout, stderr, tt.code, tt.want)
			}
		})
	}
}

// The demo runs end to end on the tiny profile in seconds: simulator
// in-process, a sweep of two classes, summary printed, run directory
// written, with steps, a knee verdict and both classes.
func TestDemoRunsAgainstTheSimulator(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "demo", "--profile", "tiny", "--duration", "1500ms", "--warmup", "300ms",
		"--users", "1,4,8", "--out", dir, "-o", "json", "-q")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s record.Summary
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("stdout is not summary JSON: %v", err)
	}
	if s.Name != "demo" || s.Requests.Succeeded == 0 || s.Requests.Failed != 0 || s.Requests.Warmup == 0 {
		t.Errorf("summary %+v: want a demo run with warm-up and successes only", s.Requests)
	}
	if len(s.Steps) != 3 || s.Knee == nil || s.Classes["chat"] == nil || s.Classes["docs"] == nil {
		t.Errorf("steps %d, knee %+v, classes %v: want 3 steps, a knee verdict and the classes chat and docs", len(s.Steps), s.Knee, len(s.Classes))
	}
	for _, w := range s.Warnings {
		if strings.Contains(w, "warm-up requests failed") {
			t.Errorf("warning %q: the demo's prompts must fit the profile's context window", w)
		}
	}
	if s.Throughput.OutputTokensPerS <= 0 || s.Metrics.TTFT.Count == 0 {
		t.Errorf("throughput %+v ttft n=%d: want figures", s.Throughput, s.Metrics.TTFT.Count)
	}
}
