package sim

import (
	"context"
	"encoding/json"
	"slices"
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
		{"after the tool", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"found"}],"stream":true,` + tools + `}`, false, true},
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
					// call_ and a short id, as OpenAI's (call_ and 16 hex digits).
					if tc.Type != "function" || !strings.HasPrefix(tc.ID, "call_") || len(tc.ID) != len("call_")+16 || !json.Valid([]byte(tc.Function.Arguments)) {
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

// TestToolMessagesCounted: an agent's call after a tool, with the
// assistant message that called it (tool_calls) and the tool's result
// (a tool message naming the call), is accepted, and both count as
// prompt tokens: the call's name and arguments (search, alpha beta
// gamma: 4 words) and the result (found it: 2 words), measured against
// the same conversation without them.
func TestToolMessagesCounted(t *testing.T) {
	t.Parallel()
	_, url, c := newTestServer(t, nil)
	const (
		user  = `{"role":"user","content":"q"}`
		bare  = `{"role":"assistant","content":null}`
		asked = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"alpha beta gamma"}}]}`
		tool  = `{"role":"tool","tool_call_id":"call_1","content":"found it"}`
	)
	prompt := func(msgs string) int {
		r := post(context.Background(), c, url+"/v1/chat/completions", `{"max_tokens":2,"messages":[`+msgs+`]}`)
		if r.err != nil || r.status != 200 {
			t.Fatalf("%s: status %d err %v: %s", msgs, r.status, r.err, r.body)
		}
		var rep struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(r.body, &rep); err != nil {
			t.Fatal(err)
		}
		return rep.Usage.PromptTokens
	}
	base := prompt(user + "," + bare)
	tests := []struct {
		name  string
		msgs  string
		extra int // tokens over base
	}{
		// The call's name and arguments count.
		{"tool_calls", user + "," + asked, 4},
		// And the tool's result with them.
		{"tool result", user + "," + asked + "," + tool, 6},
	}
	for _, tt := range tests {
		if got := prompt(tt.msgs) - base; got != tt.extra {
			t.Errorf("%s: %d prompt tokens over the bare conversation, want %d", tt.name, got, tt.extra)
		}
	}
}

// TestToolCallIDsStablePerSeed: the ids of the simulator's tool calls
// are drawn from its seed and the request's arrival, so two servers with
// one seed give the same ids to the same sequence of requests (what makes
// an agent graph's wire bodies repeat), and another seed other ids.
func TestToolCallIDsStablePerSeed(t *testing.T) {
	t.Parallel()
	const body = `{"messages":[{"role":"user","content":"find the knee"}],"tools":[{"type":"function","function":{"name":"search"}}]}`
	ids := func(seed uint64) []string {
		_, url, c := newTestServer(t, func(cfg *Config) { cfg.Seed = seed })
		var out []string
		for range 3 {
			r := post(context.Background(), c, url+"/v1/chat/completions", body)
			var rep toolReply
			if r.err != nil || json.Unmarshal(r.body, &rep) != nil || len(rep.Choices) == 0 || rep.Choices[0].Message == nil ||
				len(rep.Choices[0].Message.ToolCalls) != 1 {
				t.Fatalf("seed %d: reply %s err %v", seed, r.body, r.err)
			}
			out = append(out, rep.Choices[0].Message.ToolCalls[0].ID)
		}
		return out
	}
	a, b, other := ids(7), ids(7), ids(8)
	if !slices.Equal(a, b) || a[0] == a[1] || a[1] == a[2] || a[0] == a[2] {
		t.Errorf("seed 7 twice: %v and %v: want the same three distinct ids", a, b)
	}
	if slices.Equal(a, other) {
		t.Errorf("seeds 7 and 8 gave the same ids %v", a)
	}
}

// TestToolMessageNamesACall: a tool message whose tool_call_id names no
// call of the assistant message before it (a lost, invented or stale
// id, or none) is a 400 naming the message; one that names a call is
// accepted.
func TestToolMessageNamesACall(t *testing.T) {
	t.Parallel()
	_, url, c := newTestServer(t, nil)
	const (
		user  = `{"role":"user","content":"q"},`
		asked = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"search","arguments":"{}"}}]},`
	)
	tests := []struct {
		name   string
		msgs   string
		status int
	}{
		// Both calls answered by id.
		{"named", user + asked + `{"role":"tool","tool_call_id":"call_1","content":"a"},{"role":"tool","tool_call_id":"call_2","content":"b"}`, 200},
		// An id no call has.
		{"unknown id", user + asked + `{"role":"tool","tool_call_id":"call_9","content":"a"}`, 400},
		// No id at all.
		{"no id", user + asked + `{"role":"tool","content":"a"}`, 400},
		// No assistant message called a tool.
		{"no call", user + `{"role":"assistant","content":"hi"},{"role":"tool","tool_call_id":"call_1","content":"a"}`, 400},
		// An id of an earlier assistant message, not the one before.
		{"stale id", user + asked + `{"role":"tool","tool_call_id":"call_1","content":"a"},{"role":"assistant","content":"ok"},{"role":"tool","tool_call_id":"call_2","content":"b"}`, 400},
	}
	for _, tt := range tests {
		r := post(context.Background(), c, url+"/v1/chat/completions", `{"max_tokens":2,"messages":[`+tt.msgs+`]}`)
		if r.err != nil || r.status != tt.status {
			t.Errorf("%s: status %d err %v (%s), want %d", tt.name, r.status, r.err, r.body, tt.status)
		}
		if tt.status == 400 && !strings.Contains(string(r.body), "tool_call_id") {
			t.Errorf("%s: error %s does not name tool_call_id", tt.name, r.body)
		}
	}
}
