package protocol

import "testing"

// TestRenderToolMessages: a chat body whose conversation holds a tool
// exchange renders the assistant message with its tool_calls (content
// null when the reply had no text) and the tool message with its
// tool_call_id, as OpenAI's function-calling protocol has them; a body
// without one keeps the plain renderer's bytes.
func TestRenderToolMessages(t *testing.T) {
	t.Parallel()
	call := []ReplyToolCall{{ID: "call_1", Name: "search", Arguments: `{"q":"x"}`}}
	tests := []struct {
		name string
		msgs []ChatMessage
		want string
	}{
		// A reply that called the tool without text: content null.
		{"no text", []ChatMessage{{Role: "user", Content: "q"}, {Role: "assistant", ToolCalls: call}, {Role: "tool", Content: "found", ToolCallID: "call_1"}},
			`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"q\":\"x\"}"}}]},{"role":"tool","content":"found","tool_call_id":"call_1"}],"stream":false}`},
		// A reply with text keeps it.
		{"text", []ChatMessage{{Role: "user", Content: "q"}, {Role: "assistant", Content: "let me look", ToolCalls: call}, {Role: "tool", Content: "<b>", ToolCallID: "call_1"}},
			`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"let me look","tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"q\":\"x\"}"}}]},{"role":"tool","content":"<b>","tool_call_id":"call_1"}],"stream":false}`},
		// No exchange: the plain renderer's bytes.
		{"plain", []ChatMessage{{Role: "user", Content: "q"}}, `{"messages":[{"role":"user","content":"q"}],"stream":false}`},
	}
	for _, tt := range tests {
		got, err := OpenAIBody{Messages: tt.msgs}.Render(APIChat)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: %s, %v\nwant %s", tt.name, got, err, tt.want)
		}
	}
}
