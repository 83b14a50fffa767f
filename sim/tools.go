package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// apiTool is what the simulator reads of a chat request's tools entry.
type apiTool struct {
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// toolCallOf is the function a chat request's reply calls, "" for none.
// The rule is deterministic, so tests know the truth: a request that
// offers tools and carries no assistant or tool message yet (the first
// call of an agent's conversation) calls the first tool offered; once
// the conversation holds a reply or a tool's result, the model answers.
func toolCallOf(req *apiRequest, api apiKind) string {
	if api != apiChat || len(req.Tools) == 0 {
		return ""
	}
	for _, m := range req.Messages {
		if m.Role == "assistant" || m.Role == "tool" {
			return ""
		}
	}
	if name := req.Tools[0].Function.Name; name != "" {
		return name
	}
	return "tool"
}

// callsTool reports whether the call's reply is the tool call: the
// request asked for one and no expected answer overrides it.
func (c *call) callsTool() bool { return c.g.toolCall != "" && c.answer == "" }

// shortID is the call's id without its prefix (chatcmpl-): what a tool
// call's id (call_…, toolu_…) is made of.
func (c *call) shortID() string {
	_, id, _ := strings.Cut(c.id, "-")
	return id
}

// checkToolMessages holds a chat conversation to OpenAI's rule: a "tool"
// message answers a call of the assistant message with tool_calls before
// it, naming it by tool_call_id; one that names no such call is a 400
// (a client that lost or invented the id would otherwise go unnoticed).
// Ollama's tool messages name the tool (tool_name), translated to
// ToolCallID with the calls named by their tool (ollamaChatMessages);
// field is the member the error names.
func checkToolMessages(msgs []apiMessage, field string) *apiError {
	var calls []string // the ids of the last assistant message's calls
	for i, m := range msgs {
		switch m.Role {
		case "assistant":
			calls = calls[:0]
			for _, tc := range m.ToolCalls {
				calls = append(calls, tc.ID)
			}
		case "tool":
			if m.ToolCallID == "" || !slices.Contains(calls, m.ToolCallID) {
				return badRequest(fmt.Sprintf("messages[%d].%s", i, field),
					"messages[%d]: a tool message must answer a call of the assistant message before it: %s %q is none of its tool_calls %q", i, field, m.ToolCallID, calls)
			}
		}
	}
	return nil
}

// callTool makes the reply one tool call in one token (finish reason
// "tool_calls", no reasoning, no mid-stream fault).
func (c *call) callTool() {
	c.reasoning, c.faultAt = 0, 0
	c.st.req.OutputTokens, c.st.reason = 1, "tool_calls"
}

// toolCallJSON is the reply's tool_calls array, as OpenAI sends it both
// in a streamed delta (with the call's index) and in a whole message.
func (c *call) toolCallJSON(b []byte) []byte {
	b = append(b, `[{"index":0,"id":"call_`...)
	b = append(b, c.shortID()...)
	b = append(b, `","type":"function","function":{"name":`...)
	b = strconv.AppendQuote(b, c.g.toolCall)
	return append(b, `,"arguments":"{\"query\":\"q\"}"}}]`...)
}

// toolCallChunk renders the streamed chunk that carries the tool call.
func (d *openaiDialect) toolCallChunk() []byte {
	b := append(d.cr.buf[:0], d.cr.head...)
	b = append(b, `{"index":0,"delta":{"tool_calls":`...)
	b = d.c.toolCallJSON(b)
	b = append(b, `},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
	d.cr.buf = b
	return b
}

// toolCallBody renders a whole reply that calls the tool.
func (d *openaiDialect) toolCallBody(u usage) []byte {
	c := d.c
	b := []byte(`{"id":` + strconv.Quote(c.id) + `,"object":"chat.completion","created":` + strconv.FormatInt(c.created, 10) + `,"model":`)
	b = append(b, c.s.modelJSON...)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":`...)
	b = c.toolCallJSON(b)
	b = append(b, `},"logprobs":null,"finish_reason":"tool_calls"}],"usage":`...)
	return append(u.appendJSON(b), '}')
}
