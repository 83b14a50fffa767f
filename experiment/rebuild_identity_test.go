package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
)

// identityCase is one command's run: a plan (the simulator's URL is %[1]s)
// and how the command runs it.
type identityCase struct {
	name string
	plan string
	run  func(context.Context, *testing.T, string) (*Outcome, error)
}

// TestRebuildIsIdenticalForEveryCommand: whatever command wrote a run
// directory, `inferload report` (Rebuild) rewrites summary.json and
// report.html byte for byte, because the live run finishes with the same
// assembly from the same files. Every row is a command or a schedule
// with its own figures (steps, knee, capacity, soak windows, FLOPs pacing,
// trace replay, retries).
func TestRebuildIsIdenticalForEveryCommand(t *testing.T) {
	t.Parallel()
	trace := writeTrace(t)
	faulty := tinySim(t, sim.Faults{Status: map[int]float64{503: 0.3}})
	plan := func(p string) func(context.Context, *testing.T, string) (*Outcome, error) {
		return func(ctx context.Context, t *testing.T, url string) (*Outcome, error) {
			return Run(ctx, testPlan(t, fmt.Sprintf(p, url, trace)), Options{})
		}
	}
	sweep := func(mode string, loads []float64) func(context.Context, *testing.T, string) (*Outcome, error) {
		return func(ctx context.Context, t *testing.T, url string) (*Outcome, error) {
			p := testPlan(t, fmt.Sprintf(identityHead+"load: {concurrency: 1, warmup: 100ms}\n", url))
			return Sweep(ctx, p, Options{}, SweepOptions{Mode: mode, Loads: loads, StepDuration: 500 * time.Millisecond})
		}
	}
	tests := []identityCase{
		// A closed loop for a duration, with a warm-up.
		{"run closed", identityHead + "load: {concurrency: 2, duration: 800ms, warmup: 200ms}\n", nil},
		// An open loop: Poisson arrivals for a duration.
		{"run open", identityHead + "load: {rate: 20, duration: 800ms}\n", nil},
		// A request count instead of a duration.
		{"run requests", identityHead + "load: {concurrency: 3, requests: 12}\n", nil},
		// Staged: a step, then a ramp.
		{"stages", identityHead + "load: {concurrency: 1, stages: [400ms@2, ramp 400ms@4]}\n", nil},
		// Open-loop paced by compute (the summary's mode is open).
		{"flops pacing", identityHead + "load: {flops_per_s: 1e13, arrival: constant, duration: 800ms}\ncompute: {params_b: 1}\n", nil},
		// Conversations of 3 turns over two stages, with a warm-up: the
		// sessions figures, with conversations cut by each stage's end.
		{"conversations", "target: {url: %[1]s}\nworkload: {classes: [{name: chat, weight: 1, input_tokens: \"16\", output_tokens: \"4\", turns: 3}]}\n" +
			"load: {concurrency: 2, warmup: 100ms, stages: [400ms@2, 400ms@3]}\n", nil},
		// A replayed trace.
		{"trace", identityHead + "load: {trace: {path: %[2]s, speed: 4}}\n", nil},
		// Retries: 30% of attempts answer 503 and are retried.
		{"retries", "", func(ctx context.Context, t *testing.T, _ string) (*Outcome, error) {
			return Run(ctx, testPlan(t, "target: {url: "+faulty+", retry: {max_attempts: 3, initial_backoff: 1ms}}\n"+
				"workload: {input_tokens: \"16\", output_tokens: \"4\"}\nload: {concurrency: 2, requests: 16}\n"), Options{})
		}},
		// A sweep of users and one of rates (knee detection over steps).
		{"sweep users", "", sweep(record.ModeClosed, []float64{1, 2})},
		{"sweep rates", "", sweep(record.ModeOpen, []float64{10, 20})},
		// A capacity search: probes chosen live, judged again on rebuild.
		{"find-capacity", "", func(ctx context.Context, t *testing.T, url string) (*Outcome, error) {
			p := testPlan(t, fmt.Sprintf(identityHead+"load: {concurrency: 1, warmup: 100ms}\n", url))
			slo, err := record.ParseSLO("e2e.p50<=10s")
			if err != nil {
				t.Fatal(err)
			}
			return FindCapacity(ctx, p, Options{}, CapacityOptions{Mode: record.ModeClosed,
				Search: analyze.SearchOptions{Low: 1, High: 2, Whole: true, MaxProbes: 2},
				SLOs:   []record.SLO{slo}, ProbeDuration: 500 * time.Millisecond})
		}},
		// Steered from the live UI: a note, a load change, a pause.
		{"steered", "", steeredRun},
		// A soak: windows and drift are computed from the records.
		{"soak", "", func(ctx context.Context, t *testing.T, url string) (*Outcome, error) {
			p := testPlan(t, fmt.Sprintf(identityHead+"load: {concurrency: 2, duration: 1200ms}\n", url))
			return Soak(ctx, p, Options{}, SoakOptions{Window: 300 * time.Millisecond})
		}},
	}
	url := tinySim(t, sim.Faults{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := tc.run
			if run == nil {
				run = plan(tc.plan)
			}
			out, err := run(context.Background(), t, url)
			if err != nil {
				t.Fatal(err)
			}
			checkIdentity(t, tc.name, out)
		})
	}
}

// identityHead is a plan's target (%[1]s) and a small workload.
const identityHead = "target: {url: %[1]s}\nworkload: {input_tokens: \"16\", output_tokens: \"4\"}\n"

// checkIdentity rebuilds out.Dir and compares both files with the live
// ones, and checks the command's own section was written.
func checkIdentity(t *testing.T, name string, out *Outcome) {
	t.Helper()
	files := []string{rundir.Summary, rundir.Report}
	live := make([][]byte, len(files))
	for i, f := range files {
		b, err := os.ReadFile(filepath.Join(out.Dir, f))
		if err != nil {
			t.Fatal(err)
		}
		live[i] = b
	}
	if _, err := summary.Rebuild(out.Dir); err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		rebuilt, err := os.ReadFile(filepath.Join(out.Dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(live[i], rebuilt) {
			t.Errorf("%s: rebuilt %s differs from the live one:\nlive:    %.2000s\nrebuilt: %.2000s", name, f, live[i], rebuilt)
		}
	}
	// Rebuild digests the records in its one read; WriteReport reads them
	// for the digest itself. Both must draw the same page.
	if err := summary.WriteReport(out.Dir, out.Summary); err != nil {
		t.Fatal(err)
	}
	if alone, err := os.ReadFile(filepath.Join(out.Dir, rundir.Report)); err != nil || !bytes.Equal(alone, live[1]) {
		t.Errorf("%s: report.html drawn by summary.WriteReport alone differs from the live one (err %v)", name, err)
	}
	s := out.Summary
	switch {
	case s.Requests.Succeeded == 0:
		t.Errorf("%s: no request succeeded: %+v", name, s.Requests)
	case strings.HasPrefix(name, "sweep") && (len(s.Steps) < 2 || s.Knee == nil):
		t.Errorf("%s: %d steps, knee %v: want the steps and a knee verdict", name, len(s.Steps), s.Knee)
	case name == "find-capacity" && (s.Capacity == nil || len(s.Capacity.Probes) == 0):
		t.Errorf("%s: capacity %+v: want probes", name, s.Capacity)
	case name == "soak" && (s.Soak == nil || len(s.Soak.Windows) < 3 || len(s.Soak.Drift) == 0):
		t.Errorf("%s: soak %+v: want windows and drift in the live summary", name, s.Soak)
	case name == "flops pacing" && s.Mode != record.ModeOpen:
		t.Errorf("%s: mode %s: want open", name, s.Mode)
	case name == "steered" && len(s.Steps) != 3:
		t.Errorf("%s: %d steps: want one per load set", name, len(s.Steps))
	case name == "retries" && s.Retries == nil:
		t.Errorf("%s: no retries section", name)
	case name == "conversations" && (s.Sessions["chat"] == nil || s.Sessions["chat"].Completed == 0):
		t.Errorf("%s: sessions %v: want chat's completed conversations", name, s.Sessions)
	case name == "conversations":
		checkSessionRecords(t, out.Dir) // numbered into the run's IDs across stages
	}
}

// writeTrace is an Azure-style trace of 8 requests 100 ms apart.
func writeTrace(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("TIMESTAMP,ContextTokens,GeneratedTokens\n")
	for i := range 8 {
		fmt.Fprintf(&b, "2023-11-16 18:15:46.%03d0000,%d,%d\n", 100*i, 20+i, 4+i)
	}
	path := filepath.Join(t.TempDir(), "azure.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKilledSweepRebuildsCompletedSteps: a sweep killed during its third
// step (here: its directory cut back to what the disk held then, the
// third step's stage_end and the run's closing events never written, no
// summary.json) rebuilds its first two steps exactly as the live run
// judged them.
func TestKilledSweepRebuildsCompletedSteps(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	p := testPlan(t, fmt.Sprintf(identityHead+"load: {concurrency: 1, warmup: 100ms}\n", url))
	out, err := Sweep(context.Background(), p, Options{}, SweepOptions{Mode: record.ModeClosed,
		Loads: []float64{1, 2, 4}, StepDuration: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Summary.Steps) != 3 {
		t.Fatalf("%d steps, want 3", len(out.Summary.Steps))
	}
	cutAfterStageEnd(t, out.Dir, 2)
	if err := os.Remove(filepath.Join(out.Dir, rundir.Summary)); err != nil {
		t.Fatal(err)
	}
	rb, err := summary.Rebuild(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	s := rb.Summary
	if !s.Interrupted || len(s.Steps) != 2 {
		t.Fatalf("interrupted %v with %d steps: want an interrupted run with the 2 completed steps", s.Interrupted, len(s.Steps))
	}
	for i := range 2 {
		want, _ := json.Marshal(out.Summary.Steps[i])
		got, _ := json.Marshal(s.Steps[i])
		if !bytes.Equal(want, got) {
			t.Errorf("step %d rebuilt differs:\nlive:    %s\nrebuilt: %s", i+1, want, got)
		}
	}
	if s.Knee == nil {
		t.Error("no knee verdict over the completed steps")
	}
}

// cutAfterStageEnd truncates events.jsonl after the n-th stage_end.
func cutAfterStageEnd(t *testing.T, dir string, n int) {
	t.Helper()
	path := filepath.Join(dir, rundir.Events)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []byte
	seen := 0
	for line := range bytes.Lines(raw) {
		kept = append(kept, line...)
		if bytes.Contains(line, []byte(`"kind":"stage_end"`)) {
			if seen++; seen == n {
				break
			}
		}
	}
	if seen != n {
		t.Fatalf("events.jsonl has %d stage_end events, want at least %d", seen, n)
	}
	if err := os.WriteFile(path, kept, 0o644); err != nil {
		t.Fatal(err)
	}
}
