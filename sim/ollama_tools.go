package sim

import (
	"encoding/json"
	"strconv"
)

// This file: tool calls on Ollama's /api/chat. A request offering tools
// (OpenAI's function shape, which Ollama takes) whose conversation holds
// no reply yet is answered with a call of the first tool (toolCallOf),
// in message.tool_calls with the arguments as an object and no id; the
// next request carries that assistant message and a "tool" message that
// names the tool (tool_name), as Ollama matches a result to its call.

// ollamaMessage is a message of an /api/chat request.
type ollamaMessage struct {
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

// ollamaChatMessages translates the conversation to the chat API's: a call's
// arguments count as their JSON text, and a call is named by its tool,
// the name a tool message answers it by (checkToolMessages then holds
// tool_name to the calls of the assistant message before it).
func ollamaChatMessages(msgs []ollamaMessage) []apiMessage {
	out := make([]apiMessage, len(msgs))
	for i, m := range msgs {
		out[i] = apiMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolName}
		for _, tc := range m.ToolCalls {
			var c apiToolCall
			c.ID, c.Function.Name, c.Function.Arguments = tc.Function.Name, tc.Function.Name, string(tc.Function.Arguments)
			out[i].ToolCalls = append(out[i].ToolCalls, c)
		}
	}
	return out
}

// appendToolCalls renders the reply's message that calls the tool.
func (d *ollamaDialect) appendToolCalls(b []byte) []byte {
	b = append(b, `"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":`...)
	b = strconv.AppendQuote(b, d.c.g.toolCall)
	return append(b, `,"arguments":{"query":"q"}}}]}`...)
}
