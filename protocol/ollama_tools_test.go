package protocol

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

// TestOllamaKeepsToolCalls: with Request.KeepText, an /api/chat reply's
// text and tool calls are kept, streamed or whole, in the shape Ollama's
// API documentation gives them (message.tool_calls, each a function with
// a name and an arguments object); a call without an id is named by its
// position, one with an id keeps it.
func TestOllamaKeepsToolCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, contentType, reply string
		stream                   bool
		text                     string
		calls                    []ReplyToolCall
	}{
		// Streamed: the call comes whole in one line, then the final one.
		{"stream", "application/x-ndjson", `{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Tokyo"}}}]},"done":false}
{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":9,"eval_count":3}
`, true, "", []ReplyToolCall{{ID: "ollama_call_0", Name: "get_weather", Arguments: `{"city":"Tokyo"}`}}},
		// Whole: text and two calls, the second with an id of its own.
		{"whole", "application/json", `{"model":"m","message":{"role":"assistant","content":"Let me \"see\"","tool_calls":[{"function":{"name":"a","arguments":{}}},{"id":"call_x","function":{"name":"b","arguments":{"q":1}}}]},"done":true,"done_reason":"stop","prompt_eval_count":9,"eval_count":3}`,
			false, `Let me "see"`, []ReplyToolCall{{ID: "ollama_call_0", Name: "a", Arguments: "{}"}, {ID: "call_x", Name: "b", Arguments: `{"q":1}`}}},
		// Text only: no call.
		{"text", "application/x-ndjson", `{"message":{"role":"assistant","content":"Hi"},"done":false}
{"message":{"role":"assistant","content":" there"},"done":true,"done_reason":"stop","prompt_eval_count":1,"eval_count":2}
`, true, "Hi there", nil},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", tt.contentType)
			_, _ = w.Write([]byte(tt.reply))
		}))
		req := apiRequest(APIOllama, tt.stream)
		req.KeepText = 1 << 16
		tr := doTrace(t, newClient(t, srv.URL, nil), req)
		srv.Close()
		if tr.Err != "" {
			t.Fatalf("%s: %s %s", tt.name, tr.Err, tr.ErrMsg)
		}
		if got := tr.AnswerText(); got != tt.text {
			t.Errorf("%s: text %q, want %q", tt.name, got, tt.text)
		}
		if got := tr.ReplyToolCalls(); tr.ToolCalls != (tt.calls != nil) || !reflect.DeepEqual(got, tt.calls) {
			t.Errorf("%s: calls %v %+v, want %+v", tt.name, tr.ToolCalls, got, tt.calls)
		}
	}
}

// TestRenderOllamaTools: an /api/chat body whose conversation holds a
// tool exchange renders Ollama's messages: the assistant message's
// tool_calls with the arguments as an object (toolInput's rule), then a
// tool message naming the tool by tool_name.
func TestRenderOllamaTools(t *testing.T) {
	t.Parallel()
	calls := []ReplyToolCall{{ID: "ollama_call_0", Name: "get_weather", Arguments: `{"city":"Tokyo"}`}, {ID: "ollama_call_1", Name: "now", Arguments: `oops`}}
	msgs := []ChatMessage{{Role: "user", Content: "q"}, {Role: "assistant", ToolCalls: calls},
		{Role: "tool", Content: "sunny", ToolCallID: "ollama_call_0"}, {Role: "tool", Content: "noon", ToolCallID: "ollama_call_1"}}
	got, err := OpenAIBody{Model: "m", Messages: msgs, MaxTokens: 8}.Render(APIOllama)
	want := `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Tokyo"}}},{"function":{"name":"now","arguments":{"arguments":"oops"}}}]},` +
		`{"role":"tool","content":"sunny","tool_name":"get_weather"},{"role":"tool","content":"noon","tool_name":"now"}],"model":"m","options":{"num_predict":8},"stream":false}`
	if err != nil || string(got) != want {
		t.Errorf("%s, %v\nwant %s", got, err, want)
	}
}
