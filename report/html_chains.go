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
	sec := &section{ID: "chains", Title: "Multi-step chains",
		Help: "Each chain class end to end, then step by step: its own latency in successful chains, its share of the chain's time, and the chains that failed at it."}
	for _, name := range names {
		c := chains[name]
		t := table{Caption: fmt.Sprintf("%s: %d chains, %d failed, E2E p50 %s / p99 %s ms", name, c.Chains, c.Failed, ms(c.E2E.P50), ms(c.E2E.P99)),
			Head: []string{"step", "kind", "started", "failed", "p50 ms", "p99 ms", "TTFT p50 ms", "share of E2E"}}
		for _, st := range c.Steps {
			t.Rows = append(t.Rows, []string{st.Name, st.Kind, fmt.Sprint(st.Started), fmt.Sprint(st.Failed),
				ms(st.Latency.P50), ms(st.Latency.P99), ms(st.TTFT.P50), fmt.Sprintf("%.1f %%", 100*st.ShareOfE2E)})
		}
		sec.Tables = append(sec.Tables, t)
	}
	return sec
}
