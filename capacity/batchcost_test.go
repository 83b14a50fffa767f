package capacity

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/sim"
)

// TestFitBatchCurve: the line through the levels' TPOT against their
// batch, one row per case.
func TestFitBatchCurve(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	level := func(users int, batch float64, tpot time.Duration) FitStep {
		return FitStep{Users: users, Batch: batch, TPOTP50: tpot}
	}
	tests := []struct {
		name             string
		steps            []FitStep
		limit            int
		ok               bool
		overhead, perSeq time.Duration
	}{
		// 1 ms + 4 ms per sequence at batches 1, 4 and 8: the line itself.
		{"a CPU server, scraped batches", []FitStep{level(1, 1, 5*ms), level(4, 4, 17*ms), level(16, 8, 33*ms)}, 8, true, ms, 4 * ms},
		// No scrape: 1, 4 and 16 users on 8 slots ran 1, 4 and 8.
		{"users capped by the limit", []FitStep{level(1, 0, 5*ms), level(4, 0, 17*ms), level(16, 0, 33*ms)}, 8, true, ms, 4 * ms},
		// 20 ms a step, 0.25 ms more per sequence: a memory-bound server.
		{"a memory-bound server", []FitStep{level(1, 1, 20250*time.Microsecond), level(8, 8, 22*ms)}, 64, true, 20 * ms, 250 * time.Microsecond},
		// One slot: every level ran 1 sequence, so no slope is read.
		{"one slot", []FitStep{level(1, 1, 5*ms), level(2, 1, 6*ms), level(4, 1, 5*ms)}, 1, false, 0, 0},
		// 2 and 3 sequences: a spread under 1.5x.
		{"too narrow a spread", []FitStep{level(2, 2, 9*ms), level(3, 2.9, 12*ms)}, 8, false, 0, 0},
	}
	for _, tt := range tests {
		c, ok := fitBatchCurve(tt.steps, tt.limit)
		if ok != tt.ok {
			t.Errorf("%s: identified %v, want %v (%+v)", tt.name, ok, tt.ok, c)
			continue
		}
		near := func(got, want time.Duration) bool { return (got - want).Abs() <= 10*time.Microsecond }
		if ok && (!near(c.Overhead, tt.overhead) || !near(c.PerSeq, tt.perSeq)) {
			t.Errorf("%s: %s + %s per sequence, want %s + %s", tt.name, c.Overhead, c.PerSeq, tt.overhead, tt.perSeq)
		}
	}
}

// TestFitLearnsBatchCost: a server whose decode cost against the batch is
// known by construction (a CPU thread: 0.5 ms a step and 4 ms a
// sequence; a memory-bound GPU: 20 ms a step and 0.2 ms a sequence;
// llama.cpp's wide model on one thread: 1 ms and 47 ms) generates a
// sweep across its batch limit (30 s windows), and a fit that starts
// from another shape's costs recovers the curve: the step time at one
// decoding sequence and at eight each within 15%, so a token's cost at
// 8 against 1 (BatchCostShape) within 0.05. (A step overhead that is 2%
// of the step is not pinned on its own; the curve is.)
func TestFitLearnsBatchCost(t *testing.T) {
	t.Parallel()
	cpu := sim.CostModel{StepOverhead: 500 * time.Microsecond, PrefillPerToken: 150 * time.Microsecond, DecodePerSeq: 4 * time.Millisecond, KVReadPerToken: 10 * time.Nanosecond}
	gpu := sim.CostModel{StepOverhead: 20 * time.Millisecond, PrefillPerToken: 20 * time.Microsecond, DecodePerSeq: 200 * time.Microsecond, KVReadPerToken: 10 * time.Nanosecond}
	// llama.cpp's wide model on one thread, as realcalibrate measured it
	// (TRUTH.md): 47 ms a sequence, 5 ms a prompt token.
	wide := sim.CostModel{StepOverhead: time.Millisecond, PrefillPerToken: 5 * time.Millisecond, DecodePerSeq: 47 * time.Millisecond, KVReadPerToken: 40 * time.Nanosecond}
	small, _ := sim.LookupProfile("cpu-small")
	tests := []struct {
		name        string
		truth, from sim.CostModel
		slots       int
		users       []int
	}{
		{"a CPU server from a GPU base", cpu, gpu, 8, []int{1, 8, 16}},
		{"a GPU server from a CPU base", gpu, cpu, 8, []int{1, 8, 16}},
		// The search from cpu-small alone ended at a 67 ms step and
		// 0.5 ms a sequence: a GPU's shape (x0.13), as it did on the
		// real server; the second search, from the line through the
		// levels' TPOT, finds the CPU's.
		{"llama.cpp wide, 2 slots, from cpu-small", wide, small.Cost, 2, []int{1, 2, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			truth, _ := sim.LookupProfile("cpu-small")
			truth.MaxNumSeqs, truth.Cost = tt.slots, tt.truth
			steps := shortSteps(t, truth, tt.users)
			base := truth
			base.Cost = tt.from
			res, err := Fit(base, steps, 1)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Profile.Cost
			t.Logf("fitted %s + %s per sequence (%s), truth %s + %s (%s)", got.StepOverhead, got.DecodePerSeq, BatchCostShape(got),
				tt.truth.StepOverhead, tt.truth.DecodePerSeq, BatchCostShape(tt.truth))
			for _, n := range []int{1, 8} {
				g, w := got.StepTime(0, n, 0, 0), tt.truth.StepTime(0, n, 0, 0)
				if e := relErr(float64(g), float64(w)); e > 0.15 {
					t.Errorf("step of %d sequences %s, truth %s: off by %.0f%%", n, g, w, e*100)
				}
			}
			if d := math.Abs(tokenCostAt8(got) - tokenCostAt8(tt.truth)); d > 0.05 {
				t.Errorf("a token at 8 costs x%.2f of one at 1, truth x%.2f", tokenCostAt8(got), tokenCostAt8(tt.truth))
			}
		})
	}
}

// TestFitSaysBatchCostUnidentified: a one-slot server's levels all ran
// one sequence at a time, so the fit says it could not tell how the cost
// grows with the batch; a sweep across the batch says nothing of it.
func TestFitSaysBatchCostUnidentified(t *testing.T) {
	t.Parallel()
	truth, _ := sim.LookupProfile("cpu-small")
	truth.Cost = sim.CostModel{StepOverhead: 500 * time.Microsecond, PrefillPerToken: 150 * time.Microsecond, DecodePerSeq: 4 * time.Millisecond}
	tests := []struct {
		name  string
		slots int
		users []int
		says  bool
	}{
		{"one slot", 1, []int{1, 2, 4}, true},
		{"eight slots", 8, []int{1, 8, 16}, false},
	}
	for _, tt := range tests {
		p := truth
		p.MaxNumSeqs = tt.slots
		steps := shortSteps(t, p, tt.users)
		said := strings.Contains(strings.Join(unidentified(p, steps, make([]FitPrediction, len(steps))), "\n"), "decode cost against batch")
		if said != tt.says {
			t.Errorf("%s: says the batch cost is not identified: %v, want %v", tt.name, said, tt.says)
		}
	}
}

// shortSteps simulates a sweep of truth at users: prompts of 32 to 128
// tokens and 18-token outputs (a llama.cpp test's shape), 2 s warm-up and
// 30 s windows, the figures a fit must reproduce.
func shortSteps(t *testing.T, truth sim.Profile, users []int) []FitStep {
	t.Helper()
	var reqs []FitRequest
	for _, p := range []int{32, 64, 96, 128} {
		reqs = append(reqs, FitRequest{Prompt: p, Output: 18})
	}
	steps := make([]FitStep, len(users))
	for i, u := range users {
		steps[i] = FitStep{Users: u, Warmup: 2 * time.Second, Window: 30 * time.Second, Requests: reqs}
	}
	preds, err := PredictSteps(truth, steps, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range preds {
		s := &steps[i]
		s.Throughput, s.TTFTP50, s.TTFTP90, s.TTFTP99, s.TPOTP50, s.TPOTP99 = p.Throughput, p.TTFTP50, p.TTFTP90, p.TTFTP99, p.TPOTP50, p.TPOTP99
	}
	return steps
}

func tokenCostAt8(c sim.CostModel) float64 {
	return float64(c.StepTime(0, 8, 0, 0)) / 8 / float64(c.StepTime(0, 1, 0, 0))
}
