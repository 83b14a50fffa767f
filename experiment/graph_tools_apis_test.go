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

// toolGraphPlan runs two agent classes on an API whose replies call
// tools ({{api}}: messages or ollama) against the simulator, through a
// recording proxy: "agent" offers a search tool in its plan call, so the
// simulator answers with a tool call and the on_tool_call tool runs, its
// result going to the answer call as the API's tool messages; "plain"
// offers none, so the tool is skipped.
const toolGraphPlan = `
target: {url: %s%s, api: {{api}}, model: tiny-sim, stream: %t, kernel_timestamps: false}
load: {concurrency: 2, requests: 12, grace: 10s}
workload:
  seed: 7
  classes:
    - name: agent
      weight: 1
      input_tokens: 32
      output_tokens: 8
      graph:
        - {name: plan, api: {{api}}, tools: [{type: function, function: {name: search, description: finds, parameters: {type: object}}}]}
        - {name: search, after: [plan], tool: {latency: 2ms, result_tokens: 40, on_tool_call: true}}
        - {name: answer, api: {{api}}, after: [search]}
    - name: plain
      weight: 1
      input_tokens: 32
      output_tokens: 8
      graph:
        - {name: plan, api: {{api}}}
        - {name: search, after: [plan], tool: {latency: 2ms, result_tokens: 40, on_tool_call: true}}
        - {name: answer, api: {{api}}, after: [search]}
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

// turn is what the test reads of a request's message.
type turn struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolName string `json:"tool_name"`
}

type messagesBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   string          `json:"content"`
}

// exchange is a tool exchange as a request carried it: the call (its
// name and input), what the result named it by and what it had to name
// (the call's id, or on Ollama its tool), and the result's text.
type exchange struct {
	name, input, ref, want, result string
}

// findExchange reads a request body's messages for a tool exchange: an
// assistant message with one call and the message after it answering.
func findExchange(t *testing.T, api, body string) (exchange, bool) {
	var req struct {
		Messages []turn `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	for i := 1; i+1 < len(req.Messages); i++ {
		asked, answered := req.Messages[i], req.Messages[i+1]
		if asked.Role != "assistant" {
			continue
		}
		if api == "ollama" {
			var text string
			if len(asked.ToolCalls) != 1 || answered.Role != "tool" || json.Unmarshal(answered.Content, &text) != nil {
				continue
			}
			f := asked.ToolCalls[0].Function
			return exchange{f.Name, string(f.Arguments), answered.ToolName, f.Name, text}, true
		}
		var use, result []messagesBlock
		if json.Unmarshal(asked.Content, &use) != nil || json.Unmarshal(answered.Content, &result) != nil ||
			len(use) != 1 || len(result) != 1 || answered.Role != "user" || use[0].Type != "tool_use" || result[0].Type != "tool_result" ||
			!strings.HasPrefix(use[0].ID, "toolu_") {
			continue
		}
		return exchange{use[0].Name, string(use[0].Input), result[0].ToolUseID, use[0].ID, result[0].Content}, true
	}
	return exchange{}, false
}

// TestGraphToolCallsOnOtherAPIs: on the Messages API and Ollama's
// /api/chat, the on_tool_call tool runs exactly when the simulator's
// reply called it (every agent task, no plain one), and the answer call
// after it carries that call as the API defines it: Anthropic's tool_use
// block (the simulator's id, name and input) and a user turn's
// tool_result naming its id; Ollama's tool_calls and a tool message
// naming the tool; the result is the tool's text, and the tools went out
// in the API's shape. The simulator checks the names (a 400 otherwise),
// so no call failed.
func TestGraphToolCallsOnOtherAPIs(t *testing.T) {
	t.Parallel()
	simV1 := tinySim(t, sim.Faults{})
	tests := []struct {
		api, path, offer string
	}{
		{"messages", "/v1", `"tools":[{"description":"finds","input_schema":{"type":"object"},"name":"search"}]`},
		{"ollama", "", `"tools":[{"function":{"description":"finds","name":"search","parameters":{"type":"object"}},"type":"function"}]`},
	}
	for _, tt := range tests {
		for _, stream := range []bool{true, false} {
			proxy := newRecordingProxy(t, simV1)
			res := runAgainst(t, proxy, strings.ReplaceAll(toolGraphPlan, "{{api}}", tt.api), tt.path, stream)
			s := res.Summary
			agent, plain := s.Chains["agent"], s.Chains["plain"]
			if agent == nil || plain == nil || s.Requests.Failed != 0 {
				t.Fatalf("%s stream %t: chains %v errors %v", tt.api, stream, s.Chains, s.Errors)
			}
			if search := agent.Steps[1]; search.Started != agent.Chains || search.Skipped != 0 {
				t.Errorf("%s stream %t: agent search %+v: want it run in all %d tasks", tt.api, stream, search, agent.Chains)
			}
			if search := plain.Steps[1]; search.Started != 0 || search.Skipped != plain.Chains {
				t.Errorf("%s stream %t: plain search %+v: want it skipped in all %d tasks", tt.api, stream, search, plain.Chains)
			}
			var exchanges, offers int64
			for _, body := range proxy.bodies {
				if strings.Contains(body, tt.offer) {
					offers++
				}
				ex, ok := findExchange(t, tt.api, body)
				if !ok {
					continue
				}
				exchanges++
				if ex.name != "search" || ex.input != `{"query":"q"}` || ex.ref != ex.want || len(strings.Fields(ex.result)) < 20 {
					t.Errorf("%s stream %t: exchange %+v", tt.api, stream, ex)
				}
			}
			// Only an agent's plan call offers the tool; only its answer
			// call carries the exchange.
			if exchanges != agent.Chains || offers != agent.Chains {
				t.Errorf("%s stream %t: %d bodies with a tool exchange, %d offering tools; want %d each", tt.api, stream, exchanges, offers, agent.Chains)
			}
		}
	}
}
