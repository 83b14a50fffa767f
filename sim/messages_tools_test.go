package sim

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// messagesToolReply is what the tests read of a Messages reply: a
// stream event or a whole message.
type messagesToolReply struct {
	Type         string        `json:"type"`
	ContentBlock *contentPart  `json:"content_block"`
	Content      []contentPart `json:"content"`
	StopReason   string        `json:"stop_reason"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage struct {
		InputTokens int `json:"input_tokens"`
		CacheRead   int `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

// messagesAnswer is a Messages reply read whole: its tool_use blocks
// (id, name, input joined from the stream's deltas), text and stop
// reason.
type messagesAnswer struct {
	uses  []contentPart
	input string
	text  string
	stop  string
}

func readMessagesAnswer(t *testing.T, objs []string) messagesAnswer {
	t.Helper()
	var a messagesAnswer
	for _, o := range objs {
		var rep messagesToolReply
		if err := json.Unmarshal([]byte(o), &rep); err != nil {
			t.Fatalf("%s: %v", o, err)
		}
		blocks := rep.Content
		if rep.ContentBlock != nil {
			blocks = append(blocks, *rep.ContentBlock)
		}
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				a.uses = append(a.uses, b)
				a.input += string(b.Input)
			case "text":
				a.text += b.Text
			}
		}
		a.text += rep.Delta.Text
		a.input += rep.Delta.PartialJSON
		a.stop += rep.StopReason + rep.Delta.StopReason
	}
	return a
}

// TestMessagesToolUse: a Messages request offering tools, with no reply
// in its conversation yet, gets a tool_use block calling the first tool
// (toolu_ and a short id; streamed as a content_block_start with input {}
// and an input_json_delta, or whole with its input), stop_reason
// tool_use; once the conversation holds the tool_use and a tool_result
// naming it, or with no tools, the model answers in text.
func TestMessagesToolUse(t *testing.T) {
	t.Parallel()
	_, url, c := newTestServer(t, nil)
	const (
		tools  = `"tools":[{"name":"search","description":"finds","input_schema":{"type":"object"}},{"name":"other","input_schema":{"type":"object"}}]`
		user   = `{"role":"user","content":"find the knee"}`
		asked  = `{"role":"assistant","content":[{"type":"text","text":"let me look"},{"type":"tool_use","id":"toolu_1","name":"search","input":{"query":"q"}}]}`
		result = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"found it"}]}`
	)
	tests := []struct {
		name   string
		body   string
		call   bool // a tool_use, not text
		stream bool
	}{
		// An agent's first call, streamed: it calls search.
		{"streamed", `{"max_tokens":8,"stream":true,"messages":[` + user + `],` + tools + `}`, true, true},
		// The same, whole.
		{"whole", `{"max_tokens":8,"messages":[` + user + `],` + tools + `}`, true, false},
		// The tool's result is in: the model answers.
		{"after the tool", `{"max_tokens":8,"stream":true,"messages":[` + user + `,` + asked + `,` + result + `],` + tools + `}`, false, true},
		// No tools offered: text.
		{"no tools", `{"max_tokens":8,"messages":[` + user + `]}`, false, false},
	}
	for _, tt := range tests {
		r := post(context.Background(), c, url+"/v1/messages", tt.body)
		if r.err != nil || r.status != 200 {
			t.Fatalf("%s: status %d err %v: %s", tt.name, r.status, r.err, r.body)
		}
		objs := r.events
		if !tt.stream {
			objs = []string{string(r.body)}
		}
		a := readMessagesAnswer(t, objs)
		if !tt.call {
			if len(a.uses) != 0 || a.text == "" || a.stop == "tool_use" {
				t.Errorf("%s: %+v: want text", tt.name, a)
			}
			continue
		}
		want := `{"query":"q"}`
		if tt.stream {
			want = `{}{"query": "q"}` // the start's empty input, then the delta
		}
		if len(a.uses) != 1 || a.uses[0].Name != "search" || !strings.HasPrefix(a.uses[0].ID, "toolu_") ||
			len(a.uses[0].ID) != len("toolu_")+16 || a.input != want || a.text != "" || a.stop != "tool_use" {
			t.Errorf("%s: %+v: want one tool_use of search with input %s", tt.name, a, want)
		}
	}
}

// TestMessagesToolResults: a tool_result must name a tool_use of the
// assistant turn just before it (a 400 in Anthropic's error shape
// otherwise), and its content counts as prompt tokens (found it: 2
// words), as the tool_use's name and input do.
func TestMessagesToolResults(t *testing.T) {
	t.Parallel()
	_, url, c := newTestServer(t, nil)
	const (
		user  = `{"role":"user","content":"q"},`
		asked = `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"search","input":{}}]},`
	)
	result := func(id, content string) string {
		return `{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":` + content + `}]}`
	}
	tests := []struct {
		name   string
		msgs   string
		status int
		extra  int // input tokens over the bare conversation
	}{
		// A result named by the call's id, its content a string.
		{"string", user + asked + result("toolu_1", `"found it"`), 200, 2},
		// Its content as text blocks.
		{"blocks", user + asked + result("toolu_1", `[{"type":"text","text":"found it"}]`), 200, 2},
		// An id no tool_use has.
		{"unknown id", user + asked + result("toolu_9", `"x"`), 400, 0},
		// No tool_use before it.
		{"no call", user + `{"role":"assistant","content":"hi"},` + result("toolu_1", `"x"`), 400, 0},
	}
	input := func(msgs string) (int, reply) {
		r := post(context.Background(), c, url+"/v1/messages", `{"max_tokens":2,"messages":[`+msgs+`]}`)
		var rep messagesToolReply
		_ = json.Unmarshal(r.body, &rep)
		return rep.Usage.InputTokens + rep.Usage.CacheRead, r // the prompt, cached part or not
	}
	base, r := input(user + asked + `{"role":"user","content":"next"}`)
	if r.status != 200 {
		t.Fatalf("base: %d %s", r.status, r.body)
	}
	base-- // "next" is one word
	for _, tt := range tests {
		got, r := input(tt.msgs)
		if r.err != nil || r.status != tt.status {
			t.Errorf("%s: status %d err %v (%s), want %d", tt.name, r.status, r.err, r.body, tt.status)
			continue
		}
		if tt.status != 200 {
			if !strings.Contains(string(r.body), `"invalid_request_error"`) || !strings.Contains(string(r.body), "tool_use_id") {
				t.Errorf("%s: error %s", tt.name, r.body)
			}
			continue
		}
		if got-base != tt.extra {
			t.Errorf("%s: %d input tokens over the bare conversation, want %d", tt.name, got-base, tt.extra)
		}
	}
}
