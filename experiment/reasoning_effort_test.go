package experiment

import (
	"fmt"
	"testing"
	"time"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/sim"
)

// TestReasoningPerClass: two classes of one run ask for different
// reasoning efforts (chat's reasoning_effort in the class's body), and the
// simulator reasons 8 tokens for "low" and 40 for "high". The summary's
// per-class figures recover each class's planted reasoning exactly (usage
// counts them), and the high class's reasoning phase is the longer: 40
// against 8 decode steps of at least 2 ms each.
func TestReasoningPerClass(t *testing.T) {
	t.Parallel()
	prof := enginetest.TinyProfile(t)
	prof.Cost.StepOverhead = 2 * time.Millisecond
	prof.ReasoningEffort = map[string]sim.LengthDist{"low": {Kind: "fixed", Mean: 8}, "high": {Kind: "fixed", Mean: 40}}
	prof.OutputLength = sim.LengthDist{Kind: "fixed", Mean: 6}
	_, url := enginetest.StartSim(t, sim.Config{Profile: prof, Seed: 1})
	res := runPlan(t, fmt.Sprintf(`
name: reasoning-per-class
target: {url: %s, model: %s}
load: {concurrency: 4, requests: 40}
workload:
  ignore_eos: false
  classes:
    - {name: quick, weight: 1, input_tokens: "16", output_tokens: "200", body: {reasoning_effort: low}}
    - {name: deep, weight: 1, input_tokens: "16", output_tokens: "200", body: {reasoning_effort: high}}
`, url, prof.Model))
	quick, deep := res.Summary.Classes["quick"], res.Summary.Classes["deep"]
	if quick == nil || deep == nil {
		t.Fatalf("classes %v: want quick and deep", res.Summary.Classes)
	}
	for _, c := range []struct {
		name      string
		n         int64
		reasoning int64
		answer    int64
	}{{"quick", quick.Requests.Succeeded, quick.Tokens.ReasoningTotal, quick.Tokens.OutputTotal},
		{"deep", deep.Requests.Succeeded, deep.Tokens.ReasoningTotal, deep.Tokens.OutputTotal}} {
		want := map[string]int64{"quick": 8, "deep": 40}[c.name]
		if c.n == 0 || c.reasoning != want*c.n || c.answer != (want+6)*c.n {
			t.Errorf("%s: %d requests, %d reasoning and %d output tokens; want %d and %d each", c.name, c.n, c.reasoning, c.answer, want, want+6)
		}
	}
	q, d := quick.Metrics.ReasoningPhase, deep.Metrics.ReasoningPhase
	if q == nil || d == nil {
		t.Fatalf("reasoning_ms per class: quick %v, deep %v", q, d)
	}
	if d.P50 < 40*2 || d.P50 <= q.P50 {
		t.Errorf("reasoning phase p50: deep %.1f ms, quick %.1f ms; want deep ≥ 80 ms (40 steps of ≥ 2 ms) and above quick", d.P50, q.P50)
	}
}
