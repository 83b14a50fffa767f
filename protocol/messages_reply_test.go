package protocol

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// anthropicToolStream is a streamed Messages reply that says a few words
// and calls a tool, in the events Anthropic's streaming documentation
// shows for tool use: a text block, then a tool_use block whose input
// (empty at its start) comes in input_json_delta pieces, the first one
// empty.
var anthropicToolStream = strings.Join([]string{
	`event: message_start
data: {"type":"message_start","message":{"id":"msg_014p7gG3wDgGV9EUtLvnow3U","type":"message","role":"assistant","model":"claude-opus-4-1-20250805","stop_sequence":null,"usage":{"input_tokens":472,"output_tokens":2},"content":[],"stop_reason":null}}`,
	`event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`event: ping
data: {"type": "ping"}`,
	`event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Okay, \"checking\""}}`,
	`event: content_block_stop
data: {"type":"content_block_stop","index":0}`,
	`event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}}`,
	`event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`,
	`event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"location\":"}}`,
	`event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" \"San Francisco, CA\"}"}}`,
	`event: content_block_stop
data: {"type":"content_block_stop","index":1}`,
	`event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}`,
	`event: message_stop
data: {"type":"message_stop"}`,
}, "\n\n") + "\n\n"

// A streamed text-only reply: no tool call.
var anthropicTextStream = strings.Join([]string{
	`event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
	`event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
	`event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" there"}}`,
	`event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`,
	`event: message_stop
data: {"type":"message_stop"}`,
}, "\n\n") + "\n\n"

// TestMessagesKeepsToolCalls: with Request.KeepText, a Messages reply's
// answer text and tool calls are kept as the chat API's are, so an agent
// graph's on_tool_call fires on it: a streamed tool_use block's input is
// joined from its input_json_delta pieces (the block's empty start input
// replaced), a whole reply's tool_use input is its object.
func TestMessagesKeepsToolCalls(t *testing.T) {
	t.Parallel()
	weather := []ReplyToolCall{{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather", Arguments: `{"location": "San Francisco, CA"}`}}
	tests := []struct {
		name, contentType, reply string
		stream                   bool
		text                     string
		calls                    []ReplyToolCall
	}{
		// Text, then a tool call streamed in pieces.
		{"stream tool_use", "text/event-stream", anthropicToolStream, true, `Okay, "checking"`, weather},
		// Text only: no call.
		{"stream text", "text/event-stream", anthropicTextStream, true, "Hello there", nil},
		// A whole reply: a text block and a tool_use block with its input.
		{"whole tool_use", "application/json", `{"id":"msg_2","type":"message","role":"assistant","content":[{"type":"text","text":"Okay, \"checking\""},{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{"location": "San Francisco, CA"}}],"stop_reason":"tool_use","usage":{"input_tokens":472,"output_tokens":89}}`,
			false, `Okay, "checking"`, []ReplyToolCall{{ID: weather[0].ID, Name: "get_weather", Arguments: `{"location":"San Francisco, CA"}`}}},
		// A whole reply of two tool calls and no text; one without input.
		{"whole two calls", "application/json", `{"type":"message","content":[{"type":"tool_use","id":"a","name":"x","input":{"q":1}},{"type":"tool_use","id":"b","name":"y"}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2}}`,
			false, "", []ReplyToolCall{{ID: "a", Name: "x", Arguments: `{"q":1}`}, {ID: "b", Name: "y", Arguments: "{}"}}},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", tt.contentType)
			_, _ = w.Write([]byte(tt.reply))
		}))
		req := apiRequest(APIMessages, tt.stream)
		req.KeepText = 1 << 16
		tr := doTrace(t, newClient(t, srv.URL+"/v1", nil), req)
		srv.Close()
		if tr.Err != "" {
			t.Fatalf("%s: %s %s", tt.name, tr.Err, tr.ErrMsg)
		}
		if got := tr.AnswerText(); got != tt.text {
			t.Errorf("%s: text %q, want %q", tt.name, got, tt.text)
		}
		if tr.ToolCalls != (tt.calls != nil) {
			t.Errorf("%s: ToolCalls %v, want %v", tt.name, tr.ToolCalls, tt.calls != nil)
		}
		if got := tr.ReplyToolCalls(); !reflect.DeepEqual(got, tt.calls) {
			t.Errorf("%s: calls %+v, want %+v", tt.name, got, tt.calls)
		}
	}
}

// TestRenderMessagesTools: a Messages body whose conversation holds a
// tool exchange renders Anthropic's blocks: the assistant turn's text
// and tool_use blocks (input an object), then one user turn with a
// tool_result per answer; arguments that are no JSON object follow
// toolInput's rule.
func TestRenderMessagesTools(t *testing.T) {
	t.Parallel()
	user := ChatMessage{Role: "user", Content: "q"}
	asked := func(args ...string) ChatMessage {
		m := ChatMessage{Role: "assistant"}
		for k, a := range args {
			m.ToolCalls = append(m.ToolCalls, ReplyToolCall{ID: "toolu_" + string(rune('1'+k)), Name: "search", Arguments: a})
		}
		return m
	}
	result := func(id, text string) ChatMessage { return ChatMessage{Role: "tool", Content: text, ToolCallID: id} }
	const head = `{"max_tokens":8,"messages":[{"role":"user","content":"q"},`
	tests := []struct {
		name string
		msgs []ChatMessage
		want string
	}{
		// One call, no text: a tool_use block, then a tool_result.
		{"one call", []ChatMessage{user, asked(`{"q":"x"}`), result("toolu_1", "found")},
			head + `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"search","input":{"q":"x"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"found"}]}],"stream":false}`},
		// The reply's text comes first, as a text block.
		{"text", []ChatMessage{user, {Role: "assistant", Content: "let me look", ToolCalls: asked(`{}`).ToolCalls}, result("toolu_1", "<b>")},
			head + `{"role":"assistant","content":[{"type":"text","text":"let me look"},{"type":"tool_use","id":"toolu_1","name":"search","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"<b>"}]}],"stream":false}`},
		// Two calls answered: both results in one user turn.
		{"two calls", []ChatMessage{user, asked(`{"q":"a"}`, `{"q":"b"}`), result("toolu_1", "A"), result("toolu_2", "B")},
			head + `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"search","input":{"q":"a"}},{"type":"tool_use","id":"toolu_2","name":"search","input":{"q":"b"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"A"},{"type":"tool_result","tool_use_id":"toolu_2","content":"B"}]}],"stream":false}`},
		// Empty arguments: input {}.
		{"empty args", []ChatMessage{user, asked(""), result("toolu_1", "r")},
			head + `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"search","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}]}],"stream":false}`},
		// Arguments cut short: kept as text under "arguments".
		{"cut args", []ChatMessage{user, asked(`{"q":"x`), result("toolu_1", "r")},
			head + `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"search","input":{"arguments":"{\"q\":\"x"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}]}],"stream":false}`},
		// A JSON array or string is no object: kept as text too.
		{"array args", []ChatMessage{user, asked(`[1]`), result("toolu_1", "r")},
			head + `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"search","input":{"arguments":"[1]"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}]}],"stream":false}`},
		// null is no object either.
		{"null args", []ChatMessage{user, asked(`null`), result("toolu_1", "r")},
			head + `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"search","input":{"arguments":"null"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}]}],"stream":false}`},
	}
	for _, tt := range tests {
		got, err := OpenAIBody{Messages: tt.msgs, MaxTokens: 8}.Render(APIMessages)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: %s, %v\nwant %s", tt.name, got, err, tt.want)
		}
	}
}

// TestMessagesTools: OpenAI function definitions become Anthropic's
// tools; an entry in another shape is sent as it is.
func TestMessagesTools(t *testing.T) {
	t.Parallel()
	schema := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}
	tests := []struct {
		name string
		in   map[string]any
		want map[string]any
	}{
		// name, description, parameters as input_schema.
		{"function", map[string]any{"type": "function", "function": map[string]any{"name": "search", "description": "finds", "parameters": schema}},
			map[string]any{"name": "search", "description": "finds", "input_schema": schema}},
		// No parameters: an empty object schema (Anthropic requires one).
		{"no parameters", map[string]any{"type": "function", "function": map[string]any{"name": "now"}},
			map[string]any{"name": "now", "input_schema": map[string]any{"type": "object", "properties": map[string]any{}}}},
		// Already Anthropic's shape: as it is.
		{"anthropic", map[string]any{"name": "x", "input_schema": schema}, map[string]any{"name": "x", "input_schema": schema}},
	}
	for _, tt := range tests {
		if got := MessagesTools([]map[string]any{tt.in}); !reflect.DeepEqual(got, []map[string]any{tt.want}) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
