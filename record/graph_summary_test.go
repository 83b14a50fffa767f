package record

import (
	"slices"
	"testing"
)

// graphRecord is a task of class agent: plan, two researchers, a tool
// (skipped when skipTool), an answer; each model call takes ttftUS to its
// first token and 10 ms in all, with 100 input and 10 output tokens.
func graphRecord(id uint64, doneUS, ttftUS int64, skipTool bool) *Result {
	r := &Result{ID: id, Class: "agent", Stream: true, SendUS: doneUS - 40_000, E2EUS: 40_000, OutputTokens: 10}
	model := func(name string, at int64) ChainStep {
		return ChainStep{Name: name, Kind: "chat", SendUS: at, TTFTUS: ttftUS, DurUS: 10_000, InputTokens: 100, OutputTokens: 10}
	}
	tool := ChainStep{Name: "search", Kind: "tool", SendUS: r.SendUS + 10_000, DurUS: 20_000}
	if skipTool {
		tool = ChainStep{Name: "search", Kind: "tool", Skipped: true}
	}
	r.Chain = []ChainStep{model("plan", r.SendUS), model("research#1", r.SendUS+10_000), model("research#2", r.SendUS+10_000),
		tool, model("answer", r.SendUS+30_000)}
	return r
}

// TestGraphSummary: a node's copies make one row, rows keep the graph's
// order, calls and tokens per task count what each task sent (a skipped
// tool is no call), and a task meets the SLO only when every model call
// does (the tool's 20 ms is not judged).
func TestGraphSummary(t *testing.T) {
	t.Parallel()
	a := NewAggregate()
	a.SetSLOs(&SLOs{Classes: map[string]SLO{"agent": {TTFTMs: 5}}})
	a.Add(graphRecord(1, 1_000_000, 1_000, true))  // all calls' TTFT 1 ms: met; tool skipped
	a.Add(graphRecord(2, 2_000_000, 1_000, false)) // met; tool ran
	a.Add(graphRecord(3, 3_000_000, 8_000, false)) // every call's TTFT 8 ms: missed
	s := a.Summary(RunInfo{EndUS: 4_000_000})
	c := s.Chains["agent"]
	if c == nil {
		t.Fatal("no chains.agent")
	}
	var names []string
	for _, st := range c.Steps {
		names = append(names, st.Name)
	}
	if want := []string{"plan", "research", "search", "answer"}; !slices.Equal(names, want) {
		t.Errorf("rows %v, want %v", names, want)
	}
	if r := c.Steps[1]; r.Started != 6 || r.Latency.Count != 6 {
		t.Errorf("research row %+v: want 2 copies x 3 tasks", r)
	}
	if tool := c.Steps[2]; tool.Started != 2 || tool.Skipped != 1 {
		t.Errorf("tool row %+v: want 2 started, 1 skipped", tool)
	}
	// Calls: 4 (tool skipped), 5, 5; tokens: 4 model calls x 110 each.
	if c.CallsPerTask.Count != 3 || c.CallsPerTask.P50 != 5 || c.CallsPerTask.Max != 5 || c.CallsPerTask.Mean < 4.66 || c.CallsPerTask.Mean > 4.67 {
		t.Errorf("calls per task %+v", c.CallsPerTask)
	}
	if c.TokensPerTask.P50 != 440 || c.TokensPerTask.P99 != 440 {
		t.Errorf("tokens per task %+v", c.TokensPerTask)
	}
	// Two tasks met, done inside the 4 s window: 0.5 tasks/s.
	if g := c.Goodput; g == nil || g.Met != 2 || g.Attainment < 0.66 || g.Attainment > 0.67 || g.TasksPerS != 0.5 {
		t.Errorf("goodput %+v: want 2 of 3 tasks", g)
	}
}

// TestGraphSummaryOrderFromLaterTasks: a node first seen in a later task
// (an on_tool_call tool the first task never reached) still takes its
// place in the graph's order.
func TestGraphSummaryOrderFromLaterTasks(t *testing.T) {
	t.Parallel()
	a := NewAggregate()
	first := graphRecord(1, 1_000_000, 1_000, false)
	first.Chain = slices.Delete(first.Chain, 3, 4) // no search
	a.Add(first)
	a.Add(graphRecord(2, 2_000_000, 1_000, false))
	var names []string
	for _, st := range a.Summary(RunInfo{EndUS: 3_000_000}).Chains["agent"].Steps {
		names = append(names, st.Name)
	}
	if want := []string{"plan", "research", "search", "answer"}; !slices.Equal(names, want) {
		t.Errorf("rows %v, want %v", names, want)
	}
	if a.Summary(RunInfo{EndUS: 3_000_000}).Chains["agent"].Goodput != nil {
		t.Error("goodput without an SLO")
	}
}
