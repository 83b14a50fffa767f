package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// agentSummary is a graph class whose every figure is known: 3 calls and
// 440 tokens per task at every percentile, goodput 0.5 tasks/s, a tool
// skipped twice.
func agentSummary() *record.Summary {
	return &record.Summary{Chains: map[string]*record.ChainSummary{"agent": {Chains: 4,
		E2E:           record.Stats{P50: 40, P99: 60},
		CallsPerTask:  record.CountStats{Count: 4, P50: 3, P90: 3, P99: 5},
		TokensPerTask: record.CountStats{Count: 4, P50: 440, P90: 440, P99: 880},
		Goodput:       &record.TaskGoodput{Met: 2, Attainment: 0.5, TasksPerS: 0.5},
		Steps: []record.ChainStepSummary{{Name: "plan", Kind: "chat", Started: 4},
			{Name: "search", Kind: "tool", Started: 2, Skipped: 2}}}}}
}

// TestTerminalShowsGraphTasks: the terminal's chain block gets the
// per-task line and flags the skipped tool.
func TestTerminalShowsGraphTasks(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteSummary(&b, agentSummary()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"per task: calls p50/p90/p99 3/3/5, tokens 440/440/880, goodput 0.50 tasks/s (50.0% with every model call within the SLO)",
		"(2 skipped: no tool call asked)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("terminal lacks %q:\n%s", want, b.String())
		}
	}
}

// TestHTMLShowsGraphTasks: the report's chains section carries the same
// per-task figures and a skipped column.
func TestHTMLShowsGraphTasks(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteHTML(&b, &HTMLInput{Summary: agentSummary(), Digest: NewDigest()}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"agent graphs", "calls p50/p90/p99 3/3/5", "goodput 0.50 tasks/s", "<th>skipped</th>"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
