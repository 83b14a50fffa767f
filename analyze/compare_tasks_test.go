package analyze

import (
	"math/rand/v2"
	"testing"

	"github.com/inferload/inferload/record"
)

// graphRun is a run of n "agent" graph tasks beside single "doc"
// requests: a plan call of 100-150 ms, two search copies (tools) of
// 20 ms, then an answer call of 100-150 ms times slow, so a task takes
// about 270 + 125 × slow ms; the k-th task's answer failed when failEvery
// divides k (the task then has no time to finish).
func graphRun(name string, seed uint64, n int, slow float64, failEvery int) *RunSamples {
	rng := rand.New(rand.NewPCG(seed, 1))
	rs := NewRunSamples(name)
	for k := range n {
		at := int64(k) * 1_000_000
		planUS := callUS(rng, 1)
		answerUS := callUS(rng, slow)
		steps := []record.ChainStep{
			{Name: "plan", Kind: "chat", SendUS: at, DurUS: planUS, Status: 200},
			{Name: "search#0", Kind: "tool", SendUS: at + planUS, DurUS: 20_000},
			{Name: "search#1", Kind: "tool", SendUS: at + planUS, DurUS: 20_000},
			{Name: "answer", Kind: "chat", SendUS: at + planUS + 20_000, DurUS: answerUS, Status: 200},
		}
		r := &record.Result{ID: uint64(2 * k), Class: "agent", SendUS: at, E2EUS: planUS + 20_000 + answerUS, Status: 200, Chain: steps}
		if failEvery > 0 && k%failEvery == 0 {
			r.Error, r.Status = record.ErrHTTP5xx, 500
			r.Chain[3].Error, r.Chain[3].Status = record.ErrHTTP5xx, 500
		}
		rs.Add(r)
		rs.Add(&record.Result{ID: uint64(2*k + 1), Class: "doc", SendUS: at, E2EUS: 50_000, Status: 200})
	}
	rs.Close(record.RunInfo{})
	return rs
}

// TestCompareTasks: two runs of graph tasks get task_ms rows overall
// and for the graph class from their successful tasks only, and a row
// per node for the class; an answer node 30% slower makes the task and
// that node worse (breaking task_ms.p90=10%) and leaves the plan node
// the same; runs without tasks get no row.
func TestCompareTasks(t *testing.T) {
	t.Parallel()
	base := graphRun("base", 1, 200, 1, 0)
	tests := []struct {
		name       string
		cur        *RunSamples
		tasks      int               // the current run's successful tasks
		change     map[string]string // metric: its change
		regression bool
	}{
		// The answer node 30% slower: so is it, and the task by ~10%.
		{"slower answer", graphRun("slower", 2, 200, 1.3, 0), 200, map[string]string{
			"task_ms.p90": "worse", "classes.agent.task_ms.p90": "worse",
			"classes.agent.nodes.answer.latency_ms.p90": "worse", "classes.agent.nodes.plan.latency_ms.p90": "same"}, true},
		// Same timings, other draws: no change.
		{"same", graphRun("same", 3, 200, 1, 0), 200, map[string]string{
			"task_ms.p90": "same", "classes.agent.task_ms.p90": "same",
			"classes.agent.nodes.answer.latency_ms.p90": "same", "classes.agent.nodes.search.latency_ms.p50": "same"}, false},
		// One task in four failed: it has no time to finish, the other
		// 150 keep the same times.
		{"failed", graphRun("failed", 4, 200, 1, 4), 150, map[string]string{"task_ms.p90": "same"}, false},
	}
	for _, tt := range tests {
		if n := len(tt.cur.Overall.Task); n != tt.tasks {
			t.Errorf("%s: %d task times, want %d", tt.name, n, tt.tasks)
		}
		c := compareTimes(t, tt.name, base, tt.cur, "task_ms.p90", tt.change, tt.regression)
		// plan 100-150, tools 20, answer 100-150: 220-320 ms.
		if d := deltaOf(t, c, "classes.agent.task_ms.p90"); d.Baseline < 220 || d.Baseline > 320 {
			t.Errorf("%s: task_ms.p90 baseline %.0f ms, want 220-320", tt.name, d.Baseline)
		}
		if d := deltaOf(t, c, "classes.agent.nodes.search.latency_ms.p50"); d.Baseline != 20 || d.BaselineN != 400 {
			t.Errorf("%s: search node p50 %.1f ms over %d calls, want 20 ms over 400 (both copies)", tt.name, d.Baseline, d.BaselineN)
		}
		for _, metric := range []string{"classes.doc.task_ms.p50", "nodes.plan.latency_ms.p50"} {
			if indexDelta(c.Deltas, metric) >= 0 {
				t.Errorf("%s: %s compared (a single-request class, or nodes overall)", tt.name, metric)
			}
		}
	}
	plain := NewRunSamples("plain")
	plain.Add(&record.Result{ID: 1, Class: "agent", E2EUS: 1000, Status: 200})
	if c := Compare(base, plain, CompareOptions{}); indexDelta(c.Deltas, "task_ms.p50") >= 0 {
		t.Error("task_ms compared against a run without tasks")
	}
}
