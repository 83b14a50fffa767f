package sim

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// toolReply is what the tests read of a chat reply, streamed chunk or
// whole body.
type toolReply struct {
	Choices []struct {
		Delta        *toolPart `json:"delta"`
		Message      *toolPart `json:"message"`
		FinishReason *string   `json:"finish_reason"`
	} `json:"choices"`
}

type toolPart struct {
	Content   *string `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// TestToolCalls: a chat request offering tools, with no reply or tool
// result in its messages yet, gets a call of the first tool, streamed or
// whole, in OpenAI's shape and with finish_reason tool_calls; once the
// messages hold a tool's result, or with no tools, the model answers in
// text.
func TestToolCalls(t *testing.T) {
	t.Parallel()
	_, url, c := newTestServer(t, nil)
	const tools = `"tools":[{"type":"function","function":{"name":"search","parameters":{"type":"object"}}},{"type":"function","function":{"name":"other"}}]`
	tests := []struct {
		name   string
		body   string
		call   bool // a tool call, not text
		stream bool
	}{
		// The first call of an agent, streamed: it calls search.
		{"streamed", `{"messages":[{"role":"user","content":"find the knee"}],"stream":true,` + tools + `}`, true, true},
		// The same, whole.
		{"whole", `{"messages":[{"role":"user","content":"find the knee"}],` + tools + `}`, true, false},
		// A tool's result is in: the model answers.
		{"after the tool", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":null},{"role":"tool","content":"found"}],"stream":true,` + tools + `}`, false, true},
		// No tools offered: text.
		{"no tools", `{"messages":[{"role":"user","content":"q"}]}`, false, false},
	}
	for _, tt := range tests {
		r := post(context.Background(), c, url+"/v1/chat/completions", tt.body)
		if r.err != nil || r.status != 200 {
			t.Fatalf("%s: status %d err %v", tt.name, r.status, r.err)
		}
		objs := r.events
		if !tt.stream {
			objs = []string{string(r.body)}
		}
		var names []string
		text, finish := "", ""
		for _, o := range objs {
			var rep toolReply
			if json.Unmarshal([]byte(o), &rep) != nil || len(rep.Choices) == 0 {
				continue
			}
			ch := rep.Choices[0]
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
			for _, p := range []*toolPart{ch.Delta, ch.Message} {
				if p == nil {
					continue
				}
				if p.Content != nil {
					text += *p.Content
				}
				for _, tc := range p.ToolCalls {
					if tc.Type != "function" || !strings.HasPrefix(tc.ID, "call_") || !json.Valid([]byte(tc.Function.Arguments)) {
						t.Errorf("%s: tool call %+v", tt.name, tc)
					}
					names = append(names, tc.Function.Name)
				}
			}
		}
		if tt.call {
			if len(names) != 1 || names[0] != "search" || finish != "tool_calls" || text != "" {
				t.Errorf("%s: calls %v finish %q text %q: want one call of search", tt.name, names, finish, text)
			}
		} else if len(names) != 0 || text == "" || finish == "tool_calls" {
			t.Errorf("%s: calls %v finish %q text %q: want text", tt.name, names, finish, text)
		}
	}
}
