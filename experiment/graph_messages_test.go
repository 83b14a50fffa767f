package experiment

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/inferload/inferload/sim"
)

// messagesGraphPlan runs two agent classes on the Messages API against
// the simulator (through a recording proxy): "agent" offers a search
// tool in its plan call, so the simulator answers with a tool_use and
// the on_tool_call tool runs, its result going to the answer call as a
// tool_result; "plain" offers none, so the tool is skipped.
const messagesGraphPlan = `
target: {url: %s/v1, api: messages, stream: %t, kernel_timestamps: false}
load: {concurrency: 2, requests: 12, grace: 10s}
workload:
  seed: 7
  classes:
    - name: agent
      weight: 1
      input_tokens: 32
      output_tokens: 8
      graph:
        - {name: plan, api: messages, tools: [{type: function, function: {name: search, description: finds, parameters: {type: object}}}]}
        - {name: search, after: [plan], tool: {latency: 2ms, result_tokens: 40, on_tool_call: true}}
        - {name: answer, api: messages, after: [search]}
    - name: plain
      weight: 1
      input_tokens: 32
      output_tokens: 8
      graph:
        - {name: plan, api: messages}
        - {name: search, after: [plan], tool: {latency: 2ms, result_tokens: 40, on_tool_call: true}}
        - {name: answer, api: messages, after: [search]}
`

// recordingProxy forwards every request to the simulator and keeps the
// bodies of the POSTs.
type recordingProxy struct {
	next   http.Handler
	mu     sync.Mutex
	bodies []string
}

func newRecordingProxy(t *testing.T, target string) *recordingProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = ""
	return &recordingProxy{next: httputil.NewSingleHostReverseProxy(u)}
}

func (p *recordingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.bodies = append(p.bodies, string(body))
		p.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	p.next.ServeHTTP(w, r)
}

// messagesTurn is what the test reads of a Messages request's turn.
type messagesTurn struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type messagesBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   string          `json:"content"`
}

// toolExchange reads an answer call's body: the tool_use of its
// assistant turn and the tool_result of the user turn after it; ok is
// false when the body holds no exchange.
func toolExchange(t *testing.T, body string) (use, result messagesBlock, ok bool) {
	var req struct {
		Messages []messagesTurn `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	for i := 1; i+1 < len(req.Messages); i++ {
		var asked, answered []messagesBlock
		if req.Messages[i].Role != "assistant" || json.Unmarshal(req.Messages[i].Content, &asked) != nil ||
			json.Unmarshal(req.Messages[i+1].Content, &answered) != nil || len(asked) != 1 || len(answered) != 1 {
			continue
		}
		return asked[0], answered[0], req.Messages[i+1].Role == "user"
	}
	return use, result, false
}

// TestGraphMessagesToolUse: on the Messages API, the on_tool_call tool
// runs exactly when the simulator's reply was a tool_use (every agent
// task, no plain one), and the answer call after it carries that call as
// Anthropic defines it: the assistant turn's tool_use (the simulator's
// id, name and input) and a user turn's tool_result naming it, with the
// tool's text; the tools went out in Anthropic's shape. The simulator
// checks the tool_use_id (a 400 otherwise), so no call failed.
func TestGraphMessagesToolUse(t *testing.T) {
	t.Parallel()
	simURL := tinySim(t, sim.Faults{})
	for _, stream := range []bool{true, false} {
		proxy := newRecordingProxy(t, simURL)
		res := runAgainst(t, proxy, messagesGraphPlan, stream)
		s := res.Summary
		agent, plain := s.Chains["agent"], s.Chains["plain"]
		if agent == nil || plain == nil || s.Requests.Failed != 0 {
			t.Fatalf("stream %t: chains %v errors %v", stream, s.Chains, s.Errors)
		}
		if search := agent.Steps[1]; search.Started != agent.Chains || search.Skipped != 0 {
			t.Errorf("stream %t: agent search %+v: want it run in all %d tasks", stream, search, agent.Chains)
		}
		if search := plain.Steps[1]; search.Started != 0 || search.Skipped != plain.Chains {
			t.Errorf("stream %t: plain search %+v: want it skipped in all %d tasks", stream, search, plain.Chains)
		}
		var exchanges, offers int64
		for _, body := range proxy.bodies {
			if strings.Contains(body, `"tools":[{"description":"finds","input_schema":{"type":"object"},"name":"search"}]`) {
				offers++
			}
			use, result, ok := toolExchange(t, body)
			if !ok {
				continue
			}
			exchanges++
			if use.Type != "tool_use" || !strings.HasPrefix(use.ID, "toolu_") || use.Name != "search" || string(use.Input) != `{"query":"q"}` ||
				result.Type != "tool_result" || result.ToolUseID != use.ID || len(strings.Fields(result.Content)) < 20 {
				t.Errorf("stream %t: exchange %+v then %+v", stream, use, result)
			}
		}
		// Only an agent's plan call offers the tool; only its answer call
		// carries the exchange.
		if exchanges != agent.Chains || offers != agent.Chains {
			t.Errorf("stream %t: %d bodies with a tool exchange, %d offering tools; want %d each", stream, exchanges, offers, agent.Chains)
		}
	}
}
