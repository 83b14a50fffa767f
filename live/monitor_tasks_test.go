package live

import (
	"testing"

	"github.com/inferload/inferload/record"
)

// task is a graph task of class "agent" that ended at doneMS: a plan call
// of planMS, two tool copies of 20 ms, then an answer call of 100 ms;
// failed makes the answer (and so the task) fail.
func task(id uint64, doneMS, planMS int64, failed bool) *record.Result {
	e2eUS := (planMS + 20 + 100) * 1000
	send := doneMS*1000 - e2eUS
	r := &record.Result{ID: id, Class: "agent", SendUS: send, E2EUS: e2eUS, Status: 200, Chain: []record.ChainStep{
		{Name: "plan", Kind: "chat", SendUS: send, DurUS: planMS * 1000, Status: 200, InputTokens: 10, OutputTokens: 5},
		{Name: "search#1", Kind: "tool", SendUS: send + planMS*1000, DurUS: 20_000},
		{Name: "search#2", Kind: "tool", SendUS: send + planMS*1000, DurUS: 20_000},
		{Name: "answer", Kind: "chat", SendUS: send + (planMS+20)*1000, DurUS: 100_000, Status: 200, InputTokens: 20, OutputTokens: 5},
	}}
	if failed {
		r.Error, r.Status = record.ErrHTTP5xx, 500
		r.Chain[3].Error, r.Chain[3].Status = record.ErrHTTP5xx, 500
	}
	return r
}

// TestMonitorTasks: the page's data carry summary.json's chains.<class>
// when the run has graph tasks, and none otherwise. Three tasks: plan
// calls of 80 and 180 ms (tasks of 200 and 300 ms), one failed at its
// answer; a plain request of another class. With an SLO of 150 ms on the
// whole call, the 180 ms plan call misses it: one task in three met.
func TestMonitorTasks(t *testing.T) {
	t.Parallel()
	recs := []*record.Result{task(0, 1000, 80, false), task(1, 1500, 180, false), task(2, 1800, 80, true),
		ok(1900, 10, "single", 5)}
	slos := &record.SLOs{Classes: map[string]record.SLO{"agent": {E2EMs: 150}}}
	tests := []struct {
		name  string
		recs  []*record.Result
		slos  *record.SLOs
		tasks bool
	}{
		// A graph class: its task and node figures, goodput judged.
		{"graph", recs, slos, true},
		// No SLO: the same figures, no goodput.
		{"no slo", recs, nil, true},
		// No class is a chain or graph: no tasks in the page's data.
		{"none", recs[3:], nil, false},
	}
	for _, tt := range tests {
		v := viewOf(MonitorOptions{Rules: record.Rules{SLOs: tt.slos}}, tt.recs)
		c := v.Chains["agent"]
		if (c != nil) != tt.tasks || (!tt.tasks && v.Chains != nil) {
			t.Fatalf("%s: chains %v, want some: %v", tt.name, v.Chains, tt.tasks)
		}
		if !tt.tasks {
			continue
		}
		if c.Chains != 3 || c.Failed != 1 || c.E2E.Count != 2 || c.E2E.P50 < 199 || c.E2E.P50 > 201 || c.E2E.Max < 299 || c.CallsPerTask.P50 != 4 {
			t.Errorf("%s: agent %+v: want 3 tasks, 1 failed, 2 finished in 200 and 300 ms, 4 calls each", tt.name, c)
		}
		want := []struct {
			name            string
			started, failed int64
			p50Low, p50High float64
		}{{"plan", 3, 0, 79, 181}, {"search", 6, 0, 19.9, 20.1}, {"answer", 3, 1, 99.9, 100.1}}
		if len(c.Steps) != len(want) {
			t.Fatalf("%s: nodes %+v, want plan, search, answer", tt.name, c.Steps)
		}
		for k, w := range want {
			s := c.Steps[k]
			if s.Name != w.name || s.Started != w.started || s.Failed != w.failed || s.Latency.P50 < w.p50Low || s.Latency.P50 > w.p50High {
				t.Errorf("%s: node %d %+v, want %s started %d failed %d p50 %.0f-%.0f ms", tt.name, k, s, w.name, w.started, w.failed, w.p50Low, w.p50High)
			}
		}
		if (c.Goodput != nil) != (tt.slos != nil) || (c.Goodput != nil && c.Goodput.Met != 1) {
			t.Errorf("%s: goodput %+v, want 1 task met when an SLO is set, none judged otherwise", tt.name, c.Goodput)
		}
		if v.Chains["single"] != nil {
			t.Errorf("%s: a single-request class has task figures", tt.name)
		}
	}
}
