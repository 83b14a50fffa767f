package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// TestSweepCommand: a sweep against the simulator prints summary.json with
// the baseline plus one step per load and a knee verdict; bad sweep flags
// are usage errors.
func TestSweepCommand(t *testing.T) {
	t.Parallel()
	url := startTinySim(t)
	base := []string{"sweep", "--url", url, "--model", "tiny-sim", "--input-tokens", "16", "--output-tokens", "8",
		"--duration", "400ms", "--warmup", "100ms", "--out", t.TempDir(), "-q"}
	tests := []struct {
		name  string
		args  []string
		code  int
		steps int    // steps in the printed summary (json rows)
		err   string // on stderr (error rows)
	}{
		// 1 user is the baseline itself: steps 1, 2, 4 users.
		{"users", append(base, "--users", "1,2,4", "-o", "json"), ExitOK, 3, ""},
		// A rate sweep adds the 1-user baseline before its rates.
		{"rates", append(base, "--rates", "20,40", "-o", "json"), ExitOK, 3, ""},
		// One of --users or --rates is required.
		{"neither", base, ExitUsage, 0, "set --users"},
		// Loads must rise.
		{"falling", append(base, "--users", "4,2"), ExitUsage, 0, "loads must rise"},
		// The knee percentile must be one the summary has.
		{"bad percentile", append(base, "--users", "1,2", "--knee-percentile", "p42"), ExitUsage, 0, "p42"},
	}
	for _, tt := range tests {
		s := runSummaryCase(t, tt.name, tt.args, tt.code, tt.err)
		if s == nil {
			continue
		}
		if len(s.Steps) != tt.steps || s.Knee == nil || s.Knee.Reason == "" || s.Steps[0].Target != 1 || s.Steps[0].Mode != record.ModeClosed {
			t.Errorf("%s: %d steps (want %d), knee %+v", tt.name, len(s.Steps), tt.steps, s.Knee)
		}
	}
}

// TestFindCapacityCommand: find-capacity against the simulator prints a
// capacity answer with its probes; missing or malformed SLOs and ranges
// are usage errors.
func TestFindCapacityCommand(t *testing.T) {
	t.Parallel()
	srv, url := enginetest.StartSim(t, sim.Config{})
	base := []string{"find-capacity", "--url", url, "--model", srv.Profile().Model, "--input-tokens", "16", "--output-tokens", "4",
		"--duration", "400ms", "--warmup", "100ms", "--out", t.TempDir(), "-q"}
	tests := []struct {
		name string
		args []string
		code int
		err  string
		// reason, when set, is what the answer's reason must say when
		// the search found one (on a slow enough host it may not).
		reason string
	}{
		// A generous SLO at 1..2 users: the answer names its probes (here a median needs 5 samples).
		{"search", append(base, "--users", "1:2", "--slo", "e2e.p50<=30s", "-o", "json"), ExitOK, "", ""},
		// --confirm 1: the answer, 4 users, is probed once more and holds
		// (1.5 s probes: enough replies for the step's validity).
		{"confirm", append(base, "--users", "4:4", "--duration", "1500ms", "--slo", "e2e.p50<=30s", "--confirm", "1", "-o", "json"), ExitOK, "", "confirmed 1 of 1: every one of the 2 probes at 4 users passed"},
		// A negative --confirm is a usage error.
		{"negative confirm", append(base, "--users", "1:2", "--slo", "e2e.p50<=30s", "--confirm", "-1"), ExitUsage, "--confirm at least 0", ""},
		// An SLO is required.
		{"no slo", append(base, "--users", "1:2"), ExitUsage, "at least one --slo", ""},
		// ITL is not an SLO metric.
		{"bad slo", append(base, "--users", "1:2", "--slo", "itl.p99<=1s"), ExitUsage, "ttft, ttfo, tpot or e2e", ""},
		// A range needs LOW:HIGH.
		{"bad range", append(base, "--users", "8", "--slo", "e2e.p50<=1s"), ExitUsage, "LOW:HIGH", ""},
	}
	for _, tt := range tests {
		s := runSummaryCase(t, tt.name, tt.args, tt.code, tt.err)
		if s == nil {
			continue
		}
		if s.Capacity == nil || len(s.Capacity.Probes) == 0 || len(s.Capacity.Probes) != len(s.Steps) || s.Capacity.Reason == "" {
			t.Errorf("%s: capacity %+v with %d steps", tt.name, s.Capacity, len(s.Steps))
		} else if s.Capacity.Found && !strings.Contains(s.Capacity.Reason, tt.reason) {
			t.Errorf("%s: reason %q, want it to say %q", tt.name, s.Capacity.Reason, tt.reason)
		} else if want := slices.Contains(tt.args, "--confirm"); want != (s.Capacity.Confirm == 1) {
			t.Errorf("%s: capacity.confirm %d, want 1 exactly when --confirm 1 was given", tt.name, s.Capacity.Confirm)
		}
	}
}

// TestRunWithStages: `run --stage` runs each stage and prints its steps;
// a malformed stage is reported with its index.
func TestRunWithStages(t *testing.T) {
	t.Parallel()
	url := startTinySim(t)
	base := []string{"run", "--url", url, "--model", "tiny-sim", "--concurrency", "1", "--input-tokens", "16", "--output-tokens", "4",
		"--out", t.TempDir(), "-q", "-o", "json"}
	tests := []struct {
		name  string
		args  []string
		code  int
		steps int
		err   string
	}{
		// A step and a ramp: two steps, the second a ramp from 2 to 4 users.
		{"stages", append(base, "--stage", "300ms@2", "--stage", "ramp 300ms@4"), ExitOK, 2, ""},
		// A stage without its load is a usage error, before sending anything.
		{"malformed", append(base, "--stage", "300ms"), ExitUsage, 0, "load.stages[0]"},
	}
	for _, tt := range tests {
		s := runSummaryCase(t, tt.name, tt.args, tt.code, tt.err)
		if s == nil {
			continue
		}
		if len(s.Steps) != tt.steps || s.Steps[1].Kind != record.StepRamp || s.Steps[1].From != 2 || s.Knee != nil {
			t.Errorf("%s: steps %+v", tt.name, s.Steps)
		}
	}
}

// TestSoakCommandFlags: soak refuses a missing window and a run too short
// to hold the windows a trend test needs, before sending anything.
func TestSoakCommandFlags(t *testing.T) {
	t.Parallel()
	base := []string{"soak", "--url", "http://127.0.0.1:1/v1", "--concurrency", "1", "--out", t.TempDir(), "-q"}
	tests := []struct {
		args []string
		err  string
	}{
		// The window is required.
		{append(base, "--duration", "10s"), "--window"},
		// 10 s minus a 2 s warm-up holds 4 windows of 2 s: fewer than 5.
		{append(base, "--duration", "10s", "--warmup", "2s", "--window", "2s"), "fewer than 5 windows"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(t, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.err) {
			t.Errorf("%v: exit %d, stderr %q; want usage error with %q", tt.args, code, stderr, tt.err)
		}
	}
}

// runSummaryCase runs one table row of an experiment command: it fails on
// an unexpected exit code; a row expecting an error (wantErr in stderr)
// gives nil, a successful one the summary.json it printed.
func runSummaryCase(t *testing.T, name string, args []string, wantCode int, wantErr string) *record.Summary {
	t.Helper()
	code, stdout, stderr := runCLI(t, args...)
	if code != wantCode {
		t.Fatalf("%s: exit %d, want %d; stderr: %s", name, code, wantCode, stderr)
	}
	if wantErr != "" {
		if !strings.Contains(stderr, wantErr) {
			t.Errorf("%s: stderr %q lacks %q", name, stderr, wantErr)
		}
		return nil
	}
	var s record.Summary
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("%s: %v in %s", name, err, stdout)
	}
	return &s
}

// startTinySim starts the simulator with its tiny profile (model
// "tiny-sim") on 127.0.0.1 and returns its URL.
func startTinySim(t *testing.T) string {
	t.Helper()
	_, url := enginetest.StartSim(t, sim.Config{Profile: enginetest.TinyProfile(t)})
	return url
}
