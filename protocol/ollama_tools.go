package protocol

import (
	"encoding/json"
	"strconv"
	"strings"
)

// This file: tool calls on Ollama's /api/chat. A reply's calls come in
// message.tool_calls, each {"function": {"name", "arguments": {...}}}
// with the arguments an object (not OpenAI's JSON string) and, from most
// servers, no id: Ollama matches a tool's result to its call by the
// tool's name. The next request carries the assistant message with those
// tool_calls and a "tool" message per result naming the tool (tool_name).

// keepOllama keeps what an object says of the answer: its text, and the
// object when its message calls tools.
func (t *Trace) keepOllama(l *OllamaLine, obj []byte, limit int) {
	if l.ToolCalls {
		t.keepToolCall(obj, limit)
	}
	t.keepTextPiece(l.TextRaw, limit)
}

// ollamaReply is what ReplyAnswer reads of an Ollama object: its message
// (kept raw: other APIs' objects have a "message" of another shape).
type ollamaReply struct {
	Message json.RawMessage `json:"message"`
}

type ollamaReplyMessage struct {
	Content   string `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// addOllama reads an Ollama object's message into the answer's text b
// and calls, reporting whether o had one. Each object's calls are whole
// calls, added after the earlier ones; a call without an id is named by
// its position (ollama_call_0, ...) so an answer can be matched to it
// (the request names the tool, not the id).
func addOllama(o *ollamaReply, b *strings.Builder, calls *[]ReplyToolCall) bool {
	var m ollamaReplyMessage
	if len(o.Message) == 0 || json.Unmarshal(o.Message, &m) != nil {
		return false
	}
	b.WriteString(m.Content)
	for _, tc := range m.ToolCalls {
		id := tc.ID
		if id == "" {
			id = "ollama_call_" + strconv.Itoa(len(*calls))
		}
		*calls = append(*calls, ReplyToolCall{ID: id, Name: tc.Function.Name, Arguments: inputArguments(tc.Function.Arguments)})
	}
	return true
}

// ollamaToolCall is one entry of an assistant message's tool_calls as
// Ollama takes it.
type ollamaToolCall struct {
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type ollamaAsked struct {
	Role      string           `json:"role"`
	Content   string           `json:"content"`
	ToolCalls []ollamaToolCall `json:"tool_calls"`
}

type ollamaToolResult struct {
	Role     string `json:"role"`
	Content  string `json:"content"`
	ToolName string `json:"tool_name"`
}

// ollamaTurns renders the conversation for /api/chat: an assistant
// message that called tools with Ollama's tool_calls (arguments as an
// object, by toolInput's rule), a tool message with the name of the
// tool whose call it answers; the others as they are.
func ollamaTurns(msgs []ChatMessage) []any {
	names := map[string]string{} // call id → tool name
	out := make([]any, 0, len(msgs))
	for _, m := range msgs {
		switch {
		case m.ToolCallID != "":
			out = append(out, ollamaToolResult{m.Role, m.Content, names[m.ToolCallID]})
		case len(m.ToolCalls) > 0:
			asked := ollamaAsked{Role: m.Role, Content: m.Content, ToolCalls: make([]ollamaToolCall, len(m.ToolCalls))}
			for k, c := range m.ToolCalls {
				names[c.ID] = c.Name
				asked.ToolCalls[k].Function.Name, asked.ToolCalls[k].Function.Arguments = c.Name, toolInput(c.Arguments)
			}
			out = append(out, asked)
		default:
			out = append(out, m)
		}
	}
	return out
}
