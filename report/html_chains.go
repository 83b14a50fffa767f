package report

import (
	"fmt"
	"sort"
)

// chainSection shows each multi-step chain class: where its time goes and
// which step fails.
func chainSection(in *HTMLInput) *section {
	chains := in.Summary.Chains
	if len(chains) == 0 {
		return nil
	}
	names := make([]string, 0, len(chains))
	for name := range chains {
		names = append(names, name)
	}
	sort.Strings(names)
	sec := &section{ID: "chains", Title: "Multi-step chains and agent graphs",
		Help: "Each chain or graph class end to end, then step by step (a graph's nodes in topological order, a fan-out's copies together): its own latency in successful tasks, its share of the task's time, the calls that failed at it, and on_tool_call tools skipped because no reply asked for a tool."}
	for _, name := range names {
		c := chains[name]
		t := table{Caption: fmt.Sprintf("%s: %d chains, %d failed, E2E p50 %s / p99 %s ms; per task %s", name, c.Chains, c.Failed,
			ms(c.E2E.P50), ms(c.E2E.P99), taskFigures(c)),
			Head: []string{"step", "kind", "started", "failed", "skipped", "p50 ms", "p99 ms", "TTFT p50 ms", "share of E2E"}}
		for _, st := range c.Steps {
			t.Rows = append(t.Rows, []string{st.Name, st.Kind, fmt.Sprint(st.Started), fmt.Sprint(st.Failed), fmt.Sprint(st.Skipped),
				ms(st.Latency.P50), ms(st.Latency.P99), ms(st.TTFT.P50), fmt.Sprintf("%.1f %%", 100*st.ShareOfE2E)})
		}
		sec.Tables = append(sec.Tables, t)
	}
	return sec
}
