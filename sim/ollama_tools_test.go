package sim

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestOllamaToolCalls: an /api/chat request offering tools, with no reply
// in its conversation yet, gets a call of the first tool in
// message.tool_calls (arguments an object, no id), streamed or whole,
// done_reason stop; once the conversation holds the call and a tool
// message naming the tool, or with no tools, the model answers in text;
// a tool message naming a tool no call of the message before it named is
// a 400.
func TestOllamaToolCalls(t *testing.T) {
	t.Parallel()
	_, url, c := newTestServer(t, nil)
	const (
		tools = `"tools":[{"type":"function","function":{"name":"search","parameters":{"type":"object"}}},{"type":"function","function":{"name":"other"}}]`
		user  = `{"role":"user","content":"find the knee"}`
		asked = `{"role":"assistant","content":"","tool_calls":[{"function":{"name":"search","arguments":{"query":"q"}}}]}`
	)
	tests := []struct {
		name   string
		body   string
		status int
		call   bool // a tool call, not text
	}{
		// An agent's first call, streamed (Ollama's default).
		{"streamed", `{"model":"tiny-sim","messages":[` + user + `],` + tools + `}`, 200, true},
		// Whole.
		{"whole", `{"model":"tiny-sim","stream":false,"messages":[` + user + `],` + tools + `}`, 200, true},
		// The tool's result is in: text.
		{"after the tool", `{"model":"tiny-sim","messages":[` + user + `,` + asked + `,{"role":"tool","content":"found","tool_name":"search"}],` + tools + `}`, 200, false},
		// No tools: text.
		{"no tools", `{"model":"tiny-sim","stream":false,"messages":[` + user + `]}`, 200, false},
		// A result for a tool nobody called.
		{"unknown tool", `{"model":"tiny-sim","messages":[` + user + `,` + asked + `,{"role":"tool","content":"found","tool_name":"other"}]}`, 400, false},
	}
	for _, tt := range tests {
		r := post(context.Background(), c, url+"/api/chat", tt.body)
		if r.err != nil || r.status != tt.status {
			t.Fatalf("%s: status %d err %v: %s", tt.name, r.status, r.err, r.body)
		}
		if tt.status != 200 {
			if !strings.Contains(string(r.body), "tool_name") {
				t.Errorf("%s: error %s does not name tool_name", tt.name, r.body)
			}
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(r.body)), "\n")
		var names []string
		text, reason := "", ""
		for _, line := range lines {
			var o struct {
				Message struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						ID       *string `json:"id"`
						Function struct {
							Name      string          `json:"name"`
							Arguments json.RawMessage `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"message"`
				DoneReason string `json:"done_reason"`
			}
			if err := json.Unmarshal([]byte(line), &o); err != nil {
				t.Fatalf("%s: %s: %v", tt.name, line, err)
			}
			text += o.Message.Content
			reason += o.DoneReason
			for _, tc := range o.Message.ToolCalls {
				if tc.ID != nil || string(tc.Function.Arguments) != `{"query":"q"}` {
					t.Errorf("%s: call %+v", tt.name, tc)
				}
				names = append(names, tc.Function.Name)
			}
		}
		if tt.call && (len(names) != 1 || names[0] != "search" || text != "" || reason != "stop") {
			t.Errorf("%s: calls %v text %q reason %q: want one call of search", tt.name, names, text, reason)
		}
		if !tt.call && (len(names) != 0 || text == "") {
			t.Errorf("%s: calls %v text %q: want text", tt.name, names, text)
		}
	}
}
