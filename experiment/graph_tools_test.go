package experiment

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
	"testing"
)

// toolServer is a chat and completions server: a chat request
// that offers tools gets a streamed call of search, its id a hash of the
// first message (so a test knows which id a later call must answer) and
// its arguments split over two deltas; any other request gets text. It
// records every body.
type toolServer struct {
	postLog
}

// toolCallID is the id toolServer gives the call of a prompt.
func toolCallID(prompt string) string {
	h := fnv.New32a()
	h.Write([]byte(prompt))
	return fmt.Sprintf("call_%08x", h.Sum32())
}

func (s *toolServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := s.keep(w, r)
	if !ok {
		return
	}
	var req struct {
		Tools    []any `json:"tools"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	w.Header().Set("Content-Type", "text/event-stream")
	if strings.HasSuffix(r.URL.Path, "/completions") && !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		_, _ = fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"text\":\"done\"}]}\n\ndata: [DONE]\n\n")
		return
	}
	if len(req.Tools) > 0 && len(req.Messages) == 1 {
		id := toolCallID(req.Messages[0].Content)
		_, _ = fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"let me look\"}}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":%q,\"type\":\"function\",\"function\":{\"name\":\"search\",\"arguments\":\"{\\\"q\\\":\"}}]}}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"x\\\"}\"}}]}}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n", id)
		return
	}
	_, _ = fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"an answer\"}}]}\n\ndata: [DONE]\n\n")
}

// wireMessage is what the test reads of a sent chat message.
type wireMessage struct {
	Role       string  `json:"role"`
	Content    *string `json:"content"`
	ToolCallID string  `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name, Arguments string
		} `json:"function"`
	} `json:"tool_calls"`
}

// TestGraphToolMessages: the chat call after a tool that answered a
// reply's tool call sends, after the prompt, the assistant message with
// that reply's text and tool_calls (id, name, arguments joined from the
// stream) and a tool message naming the call's id with the tool's
// result; the result is not also in the prompt. A completions call
// after the same tool gets the result appended as text, as does a chat
// call after a tool no reply called.
func TestGraphToolMessages(t *testing.T) {
	t.Parallel()
	const graphPlan = `
target: {url: %s/v1, kernel_timestamps: false}
load: {concurrency: 1, requests: 3, grace: 10s}
workload:
  seed: 3
  salt: "off"
  classes:
    - name: agent
      weight: 1
      input_tokens: 24
      output_tokens: 8
      graph:
        - {name: plan, api: chat%s}
        - {name: search, after: [plan], tool: {latency: 1ms, result_tokens: 12}}
        - {name: answer, api: %s, after: [search]}
`
	const tools = ", tools: [{type: function, function: {name: search, parameters: {type: object}}}]"
	tests := []struct {
		name, tools, api string
		messages         bool // the answer sends the tool exchange as messages
	}{
		// A chat answer: OpenAI's function-calling messages.
		{"chat", tools, "chat", true},
		// A completions answer has no messages: the result is text.
		{"completions", tools, "completions", false},
		// The plan offers no tool, so its reply calls none: the tool's
		// result is text appended to the chat answer's prompt.
		{"no tool call", "", "chat", false},
	}
	for _, tt := range tests {
		srv := &toolServer{}
		res := runAgainst(t, srv, graphPlan, tt.tools, tt.api)
		if s := res.Summary.Chains["agent"]; s == nil || s.Chains != 3 || s.Failed != 0 {
			t.Fatalf("%s: chains %+v errors %v", tt.name, res.Summary.Chains, res.Summary.Errors)
		}
		answers := 0
		for _, b := range srv.all() {
			var req struct {
				Tools    []any         `json:"tools"`
				Messages []wireMessage `json:"messages"`
				Prompt   string        `json:"prompt"`
			}
			if err := json.Unmarshal([]byte(b), &req); err != nil {
				t.Fatalf("%s: body %q: %v", tt.name, b, err)
			}
			if req.Tools != nil || (len(req.Messages) == 1 && !strings.Contains(*req.Messages[0].Content, "\n\n")) {
				continue // a plan call
			}
			answers++
			if !tt.messages {
				prompt := req.Prompt
				if len(req.Messages) == 1 {
					prompt = *req.Messages[0].Content
				}
				if len(req.Messages) > 1 || !strings.Contains(prompt, "\n\n") {
					t.Errorf("%s: body %q: want a prompt with the tool's result appended", tt.name, b)
				}
				continue
			}
			checkToolExchange(t, tt.name, req.Messages)
		}
		if answers != 3 {
			t.Errorf("%s: %d answer bodies, want 3", tt.name, answers)
		}
	}
}

// checkToolExchange checks an answer's messages: the prompt alone, the
// assistant message that called search with the id the server gave it,
// then the tool's result under that id.
func checkToolExchange(t *testing.T, name string, msgs []wireMessage) {
	t.Helper()
	if len(msgs) != 3 || msgs[0].Role != "user" || msgs[1].Role != "assistant" || msgs[2].Role != "tool" || msgs[0].Content == nil {
		t.Fatalf("%s: messages %+v: want user, assistant, tool", name, msgs)
	}
	prompt, asked, result := *msgs[0].Content, msgs[1], msgs[2]
	id := toolCallID(prompt)
	if len(asked.ToolCalls) != 1 || asked.ToolCalls[0].ID != id || asked.ToolCalls[0].Type != "function" ||
		asked.ToolCalls[0].Function.Name != "search" || asked.ToolCalls[0].Function.Arguments != `{"q":"x"}` ||
		asked.Content == nil || *asked.Content != "let me look" {
		t.Errorf("%s: assistant message %+v: want the reply's text and its call %s of search({\"q\":\"x\"})", name, asked, id)
	}
	if result.ToolCallID != id || result.Content == nil || *result.Content == "" || strings.Contains(prompt, *result.Content) {
		t.Errorf("%s: tool message %+v: want the result under %s, not in the prompt", name, result, id)
	}
}
