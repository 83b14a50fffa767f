package experiment

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
)

// virtualPlan is simPlan with no reachable target: a virtual run sends
// nothing.
func virtualPlan(t *testing.T, load string) *plan.Plan {
	return simPlan(t, "http://127.0.0.1:1/v1", load)
}

// TestVirtualSweepFindsTheKnee: sweeps of 1..32 users of 16-token
// requests against an N-sequence simulator on virtual time. Up to N users
// every request is in the batch (TTFT one prefill step, ~20 ms); at 2N
// half wait a whole reply (~170 ms): throughput stops growing at N and
// TTFT jumps, so the knee is N users and, by the SLO TTFT p50 ≤ 80 ms, so
// is the operating point. With 64 sequences every step fits the batch:
// throughput doubles with the load, no knee, and the SLO holds at the top.
func TestVirtualSweepFindsTheKnee(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		slots     int
		found     bool
		knee, op  float64
		reasonHas string
	}{
		{"8 slots: knee at 8", 8, true, 8, 8, "the knee is 8 users"},
		{"4 slots: knee at 4", 4, true, 4, 4, "the knee is 4 users"},
		{"64 slots: no knee, SLO met at the top", 64, false, 0, 32, "no knee"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := virtualPlan(t, "  concurrency: 1\n  warmup: 200ms")
			p.Workload.OutputTokens = "16"
			p.Workload.SLO = record.SLO{TTFTMs: 80}
			loads, err := ParseLoads("geometric(1,2,32)", true)
			if err != nil {
				t.Fatal(err)
			}
			out := virtualSweep(t, p, SweepOptions{Mode: record.ModeClosed, Loads: loads, StepDuration: 1600 * time.Millisecond,
				Knee: analyze.KneeOptions{Percentile: "p50"}, Stage: StageOptions{Criteria: analyze.Criteria{Required: "p50"}}},
				newSimTarget(t, p, tt.slots, 10*time.Millisecond))
			s := out.Summary
			logSteps(t, s)
			k := s.Knee
			if k == nil || k.Found != tt.found || k.Load != tt.knee || !strings.Contains(k.Reason, tt.reasonHas) {
				t.Fatalf("knee %+v, want found %v at %v users, reason with %q", k, tt.found, tt.knee, tt.reasonHas)
			}
			checkAnswerFollowsProbes(t, s.Capacity)
			if op := s.Operating; op == nil || op.Load != tt.op || op.Basis != record.OperatingSLO {
				t.Errorf("operating point %+v, want %v users by the SLO", op, tt.op)
			}
		})
	}
}

// TestVirtualFindCapacity: find-capacity for E2E p90 ≤ 80 ms against an
// N-sequence simulator on virtual time (32-token prompts, 4-token
// replies, 10 ms steps). Up to N users every request is in the batch (E2E
// about 50 ms); at 2N half of them wait a whole reply (about 100 ms), so
// the answer is N..2N-1. A probe too short to back a P99 never passes.
func TestVirtualFindCapacity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		slots     int
		slo       string
		search    analyze.SearchOptions
		probe     time.Duration
		found     bool
		low, high float64 // accepted answers
		reason    string
	}{
		{"8 slots", 8, "e2e.p90<=80ms", analyze.SearchOptions{Low: 4, High: 32, Whole: true}, 800 * time.Millisecond, true, 8, 15, "held at 95% confidence"},
		{"4 slots", 4, "e2e.p90<=80ms", analyze.SearchOptions{Low: 4, High: 32, Whole: true}, 800 * time.Millisecond, true, 4, 7, "held at 95% confidence"},
		// 0.4 s at 4 users is about 30 replies: no P99 claim, however fast.
		{"too few samples for p99", 8, "e2e.p99<=1s", analyze.SearchOptions{Low: 4, High: 4, Whole: true}, 400 * time.Millisecond, false, 0, 0, "299 needed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			slo, err := record.ParseSLO(tt.slo)
			if err != nil {
				t.Fatal(err)
			}
			p := virtualPlan(t, "  concurrency: 1\n  warmup: 200ms")
			out := virtualCapacity(t, p, CapacityOptions{Mode: record.ModeClosed, Search: tt.search,
				SLOs: []record.SLO{slo}, ProbeDuration: tt.probe}, newSimTarget(t, p, tt.slots, 10*time.Millisecond))
			logSteps(t, out.Summary)
			c := out.Summary.Capacity
			if c == nil || len(c.Probes) == 0 {
				t.Fatalf("capacity %+v: want probes", c)
			}
			checkAnswerFollowsProbes(t, c)
			checkSearchConverged(t, c, tt.search)
			if c.Found != tt.found || c.Load < tt.low || c.Load > tt.high || !strings.Contains(c.Reason, tt.reason) {
				t.Fatalf("capacity %+v; want found %v in [%v, %v], reason with %q", c, tt.found, tt.low, tt.high, tt.reason)
			}
			if tt.found {
				checkConverged(t, out.Summary, slo)
			}
			t.Logf("%s", c.Reason)
		})
	}
}

// checkConverged: a whole-user search that found its answer probed it
// and the user above it, the answer's step met the bound and the one
// above missed it (each step's own E2E figure, the truth the probe saw).
func checkConverged(t *testing.T, s *record.Summary, slo record.SLO) {
	t.Helper()
	c := s.Capacity
	p90 := map[float64]float64{}
	for _, pr := range c.Probes {
		p90[pr.Load] = s.Steps[pr.Step-1].Metrics.E2E.P90
	}
	at, okAt := p90[c.Load]
	above, okAbove := p90[c.Load+1]
	if !okAt || !okAbove || at > slo.E2EMs || above <= slo.E2EMs {
		t.Errorf("answer %v users: E2E p90 %v there (probed %v), %v one user above (probed %v); want ≤ %v ms and above it",
			c.Load, at, okAt, above, okAbove, slo.E2EMs)
	}
}

// slowingTarget is slowingServer on virtual time: a closed loop of users,
// each reply 4 tokens whose gap grows from 2 ms to 2 ms + growth over
// span of the run clock, each gap scattered ±20% (seeded).
type slowingTarget struct {
	growth, span time.Duration
}

func (s slowingTarget) serve(st schedule.Stage, warmup, _ time.Duration, startUS int64) ([]record.Result, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	var out []record.Result
	for range int(st.Target) {
		for at := time.Duration(0); at < st.Duration; {
			frac := min(float64(startUS+at.Microseconds())/float64(s.span.Microseconds()), 1)
			r := record.Result{ID: uint64(len(out) + 1), SendUS: at.Microseconds(), Warmup: at < warmup,
				Stream: true, Status: 200, InputTokens: 8, OutputTokens: 4, TokenSource: record.TokensUsage, FinishReason: "length"}
			var off time.Duration
			for range 4 {
				gap := 2*time.Millisecond + time.Duration(frac*float64(s.growth))
				off += time.Duration(float64(gap) * (0.8 + 0.4*rng.Float64()))
				r.EventsUS = append(r.EventsUS, off.Microseconds())
			}
			r.TTFTUS, r.E2EUS = r.EventsUS[0], off.Microseconds()
			out = append(out, r)
			at += off
		}
	}
	return out, nil
}

// TestVirtualSoakFindsPlantedDegradation: a 3 s soak of 8 users in 250 ms
// windows. Where the server slows from 8 ms to 248 ms a reply over the
// soak, P50 E2E rose and throughput fell, significantly; where it does
// not slow, nothing drifted. Nothing failed in either.
func TestVirtualSoakFindsPlantedDegradation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		growth time.Duration
		want   map[string]string // metric → verdict it must contain; drifted iff it does not say "no significant"
	}{
		{"planted degradation", 60 * time.Millisecond, map[string]string{
			"P50 E2E": "P50 E2E rose", "throughput": "throughput fell", "failure rate": "no significant trend"}},
		{"steady server", 0, map[string]string{
			"P50 E2E": "no significant trend", "throughput": "no significant trend", "failure rate": "no significant trend"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := testPlan(t, "name: soak\ntarget: {url: http://127.0.0.1:1/v1, model: m}\nworkload: {input_tokens: \"8\", output_tokens: \"4\"}\nload: {concurrency: 8, duration: 3s, warmup: 250ms, grace: 5s}\n")
			out := virtualSoak(t, p, SoakOptions{Window: 250 * time.Millisecond}, slowingTarget{growth: tt.growth, span: 3 * time.Second})
			s := out.Summary.Soak
			if s == nil || len(s.Windows) < 9 {
				t.Fatalf("soak %+v: want at least 9 windows", s)
			}
			seen := 0
			for _, d := range s.Drift {
				t.Logf("%s: drifted %v: %s", d.Metric, d.Drifted, d.Verdict)
				w, ok := tt.want[d.Metric]
				if !ok {
					continue
				}
				seen++
				if !strings.Contains(d.Verdict, w) || d.Drifted == strings.Contains(w, "no significant") {
					t.Errorf("%s: drifted %v, verdict %q; want %q", d.Metric, d.Drifted, d.Verdict, w)
				}
			}
			if seen != len(tt.want) {
				t.Errorf("%d of the %d judged metrics have a verdict", seen, len(tt.want))
			}
		})
	}
}

// TestVirtualCalibrateASweep: a virtual sweep of the simulator (tiny, 64
// sequences, 10 ms step overhead) at 4 and 12 users is calibrated from a
// base whose overhead is doubled and prefill cost halved: on virtual time
// the records are the model's own, so the fit recovers the overhead
// within 10% and reproduces each level's throughput within 5%.
func TestVirtualCalibrateASweep(t *testing.T) {
	t.Parallel()
	p := testPlan(t, "name: cal\ntarget: {url: http://127.0.0.1:1/v1, model: tiny-sim}\nworkload: {input_tokens: \"64\", output_tokens: \"16\"}\nload:\n  concurrency: 1\n  warmup: 500ms\n  grace: 5s\n")
	target := newSimTarget(t, p, 64, 10*time.Millisecond)
	out := virtualSweep(t, p, SweepOptions{Mode: record.ModeClosed, Loads: []float64{4, 12}, StepDuration: 4 * time.Second}, target)
	base := target.spec.Profile
	base.Cost.StepOverhead *= 2
	base.Cost.PrefillPerToken /= 2
	cal, err := calibrate(out.Dir, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Steps) != 3 {
		t.Fatalf("%d load levels, want 3 (the 1-user baseline, 4 and 12 users)", len(cal.Steps))
	}
	got := cal.Profile.Cost.StepOverhead
	t.Logf("fitted %+v; loss %.4f", cal.Profile.Cost, cal.Fit.Loss)
	if relErrF(got.Seconds(), 0.010) > 0.1 {
		t.Errorf("fitted step overhead %s, the server's is 10ms: want within 10%%", got)
	}
	for i, s := range cal.Steps {
		pr := cal.Fit.Predictions[i]
		t.Logf("%d users: %.2f req/s measured, %.2f fitted", s.Users, s.Throughput, pr.Throughput)
		if relErrF(pr.Throughput, s.Throughput) > 0.05 {
			t.Errorf("%d users: fitted %.2f req/s, measured %.2f: want within 5%%", s.Users, pr.Throughput, s.Throughput)
		}
	}
}
