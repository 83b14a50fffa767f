package experiment

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
)

// smallSim starts the "tiny" simulator with a running batch of at most
// maxSeqs: throughput grows with concurrency up to maxSeqs and is flat
// beyond, where requests queue. Steps take about 10 ms (not tiny's 1 ms, so
// that a busy test machine cannot stretch them much), so a 4-token reply
// takes about 50 ms.
func smallSim(t *testing.T, maxSeqs int) string {
	t.Helper()
	return stepSim(t, maxSeqs, 10*time.Millisecond)
}

// stepSim is smallSim with every engine step taking step.
func stepSim(t *testing.T, maxSeqs int, step time.Duration) string {
	t.Helper()
	prof := enginetest.TinyProfile(t)
	prof.MaxNumSeqs = maxSeqs
	prof.Cost.StepOverhead = step
	_, url := enginetest.StartSim(t, sim.Config{Profile: prof})
	return url
}

// simPlan is a plan against url; extra lines go under load:.
func simPlan(t *testing.T, url, load string) *plan.Plan {
	return testPlan(t, fmt.Sprintf(`
name: staged
target: {url: %s, model: tiny-sim}
workload: {input_tokens: "32", output_tokens: "4"}
load:
  grace: 5s
%s
`, url, load))
}

// TestStagesObeyTargets: each stage of a staged run applies the load it
// names (closed and open loop, steps and ramps) or is marked invalid for
// falling short, its records carry its index and unique IDs, and
// summary.json has one step per stage.
func TestStagesObeyTargets(t *testing.T) {
	t.Parallel()
	url := smallSim(t, 64)
	tests := []struct {
		name   string
		load   string
		want   []float64 // achieved load per stage
		within float64   // relative tolerance
	}{
		// Closed loop: 2 users, a ramp 2 → 6 (mean 4), then 6 users.
		{"closed", "  concurrency: 1\n  warmup: 100ms\n  stages: [500ms@2, ramp 600ms@6, 500ms@6]", []float64{2, 4, 6}, 0.2},
		// Open loop: 20 requests/s, then a ramp 20 → 60 (mean 40; 43 over the part after the warm-up).
		{"open", "  rate: 1\n  arrival: constant\n  warmup: 100ms\n  stages: [1s@20, ramp 1s@60]", []float64{20, 40}, 0.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := simPlan(t, url, tt.load)
			out, err := RunStaged(context.Background(), p, Options{}, StageOptions{})
			if err != nil {
				t.Fatal(err)
			}
			steps := out.Summary.Steps
			if len(steps) != len(tt.want) {
				t.Fatalf("%d steps, want %d", len(steps), len(tt.want))
			}
			for i, s := range steps {
				// A stage applies its load, or (a client starved by a busy
				// host) is marked invalid, saying so; overshooting is never
				// the host's doing.
				got := s.Validity.AchievedLoad
				short := got < tt.want[i]*(1-tt.within)
				if got > tt.want[i]*(1+tt.within) || (short && s.Validity.Valid) {
					t.Errorf("stage %d achieved %.2f (valid %v: %q), want %.2f ±%.0f%%", i+1, got, s.Validity.Valid, s.Validity.Reasons, tt.want[i], tt.within*100)
				}
				if short {
					t.Logf("stage %d fell short (%.2f of %.2f) and says why: %q", i+1, got, tt.want[i], s.Validity.Reasons)
				}
				if s.Index != i+1 || s.Requests.Failed != 0 || s.Requests.Warmup == 0 {
					t.Errorf("stage %d: index %d, failed %d, warm-up %d", i+1, s.Index, s.Requests.Failed, s.Requests.Warmup)
				}
			}
			checkRecords(t, out.Dir, len(tt.want))
			checkRebuild(t, out.Dir)
		})
	}
}

// checkRebuild: `inferload report` rebuilds a staged run's summary.json
// byte for byte, steps included.
func checkRebuild(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, rundir.Summary)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := summary.Rebuild(dir); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("rebuilt summary.json differs:\nlive:    %.600s\nrebuilt: %.600s", before, after)
	}
}

// checkRecords: every record names a stage in 1..n, and IDs are unique.
func checkRecords(t *testing.T, dir string, n int) {
	t.Helper()
	seen := map[uint64]bool{}
	perStep := map[int]int{}
	eachRecord(t, dir, func(r *record.Result) error {
		if seen[r.ID] {
			t.Errorf("record ID %d appears twice", r.ID)
		}
		seen[r.ID] = true
		perStep[r.Step]++
		return nil
	})
	for i := 1; i <= n; i++ {
		if perStep[i] == 0 {
			t.Errorf("no record of stage %d (records per stage: %v)", i, perStep)
		}
	}
	if len(perStep) != n {
		t.Errorf("records name stages %v, want 1..%d", perStep, n)
	}
}

// TestStagesRejectsBadInput: a stage list that cannot run fails before
// anything is sent, naming the problem, even in a plan built in code that
// plan validation never saw (a plan file's stages fail in plan.Parse,
// with their line: plan/load_test.go).
func TestStagesRejectsBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		stages []string
		warmup time.Duration
		want   string
	}{
		// A malformed stage names its index.
		{[]string{"1s@2", "1s"}, 0, "load.stages[1]"},
		// A warm-up as long as a stage would leave nothing to measure.
		{[]string{"2s@2", "1s@4"}, time.Second, "shorter than every stage"},
	}
	for _, tt := range tests {
		p := simPlan(t, "http://127.0.0.1:1/v1", "  concurrency: 1")
		p.Load.Stages, p.Load.Warmup = tt.stages, tt.warmup
		_, err := RunStaged(context.Background(), p, Options{}, StageOptions{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.stages, err, tt.want)
		}
	}
}

// TestSweepOverHTTP: a sweep of 1..32 users against the simulator over
// HTTP in wall-clock time writes one step per load, each with its own
// server_time, and judges them by the rules of its design: the knee is
// the knee rule over the steps it recorded, the operating point the SLO's
// answer over its probes. Where the knee lands depends on how fast the
// host let the client and the simulator go (CI under -race saw it move
// from 8 to 32 users), so the planted knee is tested on virtual time
// (TestVirtualSweepFindsTheKnee); nothing here depends on the host's speed.
func TestSweepOverHTTP(t *testing.T) {
	t.Parallel()
	url := smallSim(t, 8)
	p := simPlan(t, url, "  concurrency: 1\n  warmup: 200ms")
	p.Workload.OutputTokens = "16"
	p.Workload.SLO = record.SLO{TTFTMs: 80}
	loads, err := ParseLoads("geometric(1,2,32)", true)
	if err != nil {
		t.Fatal(err)
	}
	o := SweepOptions{Mode: record.ModeClosed, Loads: loads, StepDuration: 1600 * time.Millisecond,
		Knee: analyze.KneeOptions{Percentile: "p50"}, Stage: StageOptions{Criteria: analyze.Criteria{Required: "p50", LoadTolerance: 0.5}}}
	out, err := Sweep(context.Background(), p, Options{}, o)
	if err != nil {
		t.Fatal(err)
	}
	s := out.Summary
	if len(s.Steps) != 6 || s.Steps[0].Target != 1 {
		t.Fatalf("steps: %d, first target %v; want 6 starting with the 1-user baseline", len(s.Steps), s.Steps[0].Target)
	}
	logSteps(t, s)
	o.Knee.BySLO = true
	want, err := analyze.FindKnee(s.Steps, o.Knee)
	if k := s.Knee; k == nil || k.Found != want.Found || k.Load != want.Load || (err == nil && k.Reason != want.Reason) {
		t.Errorf("knee %+v; the knee rule over the recorded steps says %+v (%v)", k, want, err)
	}
	checkStepServerTime(t, s)
	checkOperatingPoint(t, s)
}

// checkOperatingPoint: the plan's SLO judged every step (the 1-user
// baseline is one of the loads, so a probe too) as find-capacity judges
// a probe, and the operating point is that answer.
func checkOperatingPoint(t *testing.T, s *record.Summary) {
	t.Helper()
	c, op := s.Capacity, s.Operating
	if c == nil || op == nil || len(c.Probes) != len(s.Steps) || strings.Join(c.SLOs, ",") != "TTFT p50 ≤ 80ms" {
		t.Fatalf("capacity %+v, operating point %+v: want every step judged by TTFT p50 ≤ 80ms", c, op)
	}
	checkAnswerFollowsProbes(t, c)
	if op.Basis != record.OperatingSLO || op.Load != c.Load || op.Found != c.Found {
		t.Fatalf("operating point %+v; want the SLO answer %v", op, c.Load)
	}
	if k := s.Knee; k.Found && (strings.Contains(k.Reason, "run at") || !strings.Contains(k.Reason, "the operating point follows the SLOs")) {
		t.Errorf("knee %q: with SLOs the knee defers to them, never recommends its own fraction", k.Reason)
	}
	t.Logf("operating point: %s", op.Reason)
}

// checkStepServerTime: each step's server_time is its own records' (one
// per measured success, the simulator's replies all carry timings), and
// 32 users on 8 slots queue in the server, 1 user does not.
func checkStepServerTime(t *testing.T, s *record.Summary) {
	t.Helper()
	for _, st := range s.Steps {
		if st.ServerTime == nil || st.ServerTime.Requests != st.Requests.Succeeded {
			t.Fatalf("step %d: server_time %+v, want %d requests", st.Index, st.ServerTime, st.Requests.Succeeded)
		}
	}
	top := s.Steps[len(s.Steps)-1]
	if top.Validity.AchievedLoad < 16 {
		// The server queues only what it cannot batch: a host too busy
		// to keep twice the 8 slots in flight plants no queue.
		t.Logf("the top step held %.1f users: its queue is not checked", top.Validity.AchievedLoad)
		return
	}
	first, last := s.Steps[0].ServerTime.QueueMS, top.ServerTime.QueueMS
	if first == nil || last == nil || last.P50 <= first.P50 || last.P50 < 10 {
		t.Errorf("queue p50: 1 user %+v, 32 users %+v; want the server queue only at 32 users on 8 slots", first, last)
	}
}

// logSteps shows what the knee was read from, for a failing run.
func logSteps(t *testing.T, s *record.Summary) {
	t.Helper()
	for _, st := range s.Steps {
		t.Logf("step %d load %v: %.1f req/s, ttft p50 %.1f p90 %.1f, e2e p50 %.1f p90 %.1f, n=%d valid=%v achieved=%.2f %v",
			st.Index, st.Target, st.Throughput.RequestsPerS, st.Metrics.TTFT.P50, st.Metrics.TTFT.P90, st.Metrics.E2E.P50, st.Metrics.E2E.P90,
			st.Metrics.E2E.Count, st.Validity.Valid, st.Validity.AchievedLoad, st.Validity.Reasons)
	}
}
