package experiment

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/sim"
)

// graphPlan runs two agent classes against the simulator: "agent" offers
// a search tool in its plan call (the simulator calls it, so the
// on_tool_call tool runs), "plain" offers none (the tool is skipped);
// both fan out to three researchers and answer after them and the tool.
const graphPlan = `
target: {url: %s, kernel_timestamps: false}
load: {concurrency: 2, requests: 16, grace: 10s}
workload:
  seed: 5
  classes:
    - name: agent
      weight: 1
      input_tokens: 32
      output_tokens: 8
      slo: e2e <= 60s
      graph:
        - {name: plan, api: chat, tools: [{type: function, function: {name: search, parameters: {type: object}}}]}
        - {name: search, after: [plan], tool: {latency: 2ms, result_tokens: 40, on_tool_call: true}}
        - {name: research, api: chat, after: [plan], count: 3}
        - {name: answer, api: chat, after: [research, search]}
    - name: plain
      weight: 1
      input_tokens: 32
      output_tokens: 8
      graph:
        - {name: plan, api: chat}
        - {name: search, after: [plan], tool: {latency: 2ms, result_tokens: 40, on_tool_call: true}}
        - {name: answer, api: chat, after: [search]}
`

// TestGraphAgainstSimulator: every task runs its whole graph as one
// record; the per-node rows are in the graph's order with the fan-out's
// copies in one row; the tool runs exactly when the simulator's reply
// called it; calls per task count each copy; task goodput judges the
// class with an SLO only; and the summary rebuilds identically.
func TestGraphAgainstSimulator(t *testing.T) {
	t.Parallel()
	res, err := Run(context.Background(), testPlan(t, fmt.Sprintf(graphPlan, tinySim(t, sim.Faults{}))), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	agent, plain := s.Chains["agent"], s.Chains["plain"]
	if agent == nil || plain == nil || s.Requests.Failed != 0 || agent.Chains+plain.Chains != 16 {
		t.Fatalf("chains %v errors %v", s.Chains, s.Errors)
	}
	rows := func(c []string) string { return strings.Join(c, " ") }
	var names []string
	for _, st := range agent.Steps {
		names = append(names, fmt.Sprintf("%s/%s/%d/%d", st.Name, st.Kind, st.Started, st.Skipped))
	}
	n := agent.Chains
	if want := fmt.Sprintf("plan/chat/%d/0 search/tool/%d/0 research/chat/%d/0 answer/chat/%d/0", n, n, 3*n, n); rows(names) != want {
		t.Errorf("agent rows %s, want %s", rows(names), want)
	}
	if agent.CallsPerTask.P50 != 6 || agent.CallsPerTask.Max != 6 || agent.TokensPerTask.P50 <= 6*32 {
		t.Errorf("agent per task: calls %+v tokens %+v", agent.CallsPerTask, agent.TokensPerTask)
	}
	if g := agent.Goodput; g == nil || g.Met != n || g.TasksPerS <= 0 {
		t.Errorf("agent goodput %+v: want every task", g)
	}
	if search := plain.Steps[1]; search.Skipped != plain.Chains || search.Started != 0 || plain.CallsPerTask.P50 != 2 || plain.Goodput != nil {
		t.Errorf("plain: search %+v, calls %+v, goodput %+v", search, plain.CallsPerTask, plain.Goodput)
	}
	expectRebuildIdentical(t, res.Dir)
}

// bodyRecorder is a chat server whose streamed reply is a function of
// the request body alone, recording every body it got.
type bodyRecorder struct {
	postLog
}

func (b *bodyRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := b.keep(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"reply to %d bytes\"}}]}\n\n"+
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4}}\n\ndata: [DONE]\n\n", len(body))
}

// TestGraphSameSeedSameWireBodies: two runs of a graph plan with the same
// seed send the same bodies (as sets: parallel copies arrive in any
// order), tools, tool results and upstream replies included.
func TestGraphSameSeedSameWireBodies(t *testing.T) {
	t.Parallel()
	const agentPlan = `
target: {url: %s/v1, kernel_timestamps: false}
load: {concurrency: 2, requests: 6, grace: 10s}
workload:
  seed: 9
  salt: "off"    # the same prompts in both runs, not a salt of each run's own
  classes:
    - name: agent
      weight: 1
      input_tokens: "uniform(16,64)"
      output_tokens: 8
      graph:
        - {name: plan, api: chat, tools: [{type: function, function: {name: search, parameters: {type: object, properties: {q: {type: string}}}}}], body: {temperature: 0.2, top_p: 0.9}}
        - {name: search, after: [plan], tool: {latency: "uniform(1ms,3ms)", result_tokens: 20}}
        - {name: research, api: chat, after: [plan], count: 3}
        - {name: answer, api: chat, after: [research, search]}
`
	var runs [2][]string
	for k := range runs {
		rec := &bodyRecorder{}
		res := runAgainst(t, rec, agentPlan)
		if res.Summary.Requests.Failed != 0 {
			t.Fatalf("run %d: errors %v", k, res.Summary.Errors)
		}
		runs[k] = slices.Sorted(slices.Values(rec.all()))
	}
	if len(runs[0]) != 6*5 || !slices.Equal(runs[0], runs[1]) {
		t.Errorf("%d and %d bodies differ:\n%q\n%q", len(runs[0]), len(runs[1]), runs[0], runs[1])
	}
	answers := 0
	for _, b := range runs[0] {
		if strings.Count(b, "reply to") == 3 {
			answers++ // the answer: three research replies in its prompt
		}
	}
	if answers != 6 {
		t.Errorf("%d answers carry the three research replies, want 6", answers)
	}
}
