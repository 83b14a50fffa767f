package protocol

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// messagesView is a MessagesEvent with decoded strings, comparable with
// cmp.
type messagesView struct {
	Type                      string
	Text, Thinking, ToolInput bool
	DeltaStop                 string
	Error                     bool
	ErrType, ErrMsg           string
	Stop                      string
	Usage, HasInput           bool
	In, Out, Read, Create     int
	Answer, Thinks            bool
	TextRaw                   string
	ToolUse, ToolUses         bool
}

func viewMessages(e *MessagesEvent) messagesView {
	f := &e.Message
	return messagesView{Type: decodeJSONString(e.Type), Text: e.Text, Thinking: e.Thinking, ToolInput: e.ToolInput,
		DeltaStop: decodeJSONString(e.DeltaStop), Error: e.Error,
		ErrType: decodeJSONString(e.ErrorType), ErrMsg: decodeJSONString(e.ErrorMessage),
		Stop: decodeJSONString(f.StopReason), Usage: f.Usage, HasInput: f.HasInput,
		In: f.Input, Out: f.Output, Read: f.CacheRead, Create: f.CacheCreate, Answer: f.Answer, Thinks: f.Thinking,
		TextRaw: decodeJSONString(e.TextRaw), ToolUse: e.ToolUse, ToolUses: f.ToolUse}
}

// referenceMessages reads data as encoding/json does, for FuzzMessages:
// the message's fields come from a "message" object when there is one,
// else from the object's own members.
func referenceMessages(data []byte) (messagesView, bool) {
	obj, ok := referenceObject(data)
	if !ok {
		return messagesView{}, false
	}
	var v messagesView
	v.Type, _ = obj["type"].(string)
	// delta and content_block both set the three flags: the later wins,
	// which a map cannot tell, so the reference only vouches for objects
	// holding one of them.
	d, hasDelta := obj["delta"]
	b, hasBlock := obj["content_block"]
	if hasDelta && hasBlock {
		return messagesView{}, false
	}
	if m, ok := d.(map[string]any); ok {
		v.Text, v.Thinking, v.ToolInput = nonEmpty(m["text"]), nonEmpty(m["thinking"]), nonEmpty(m["partial_json"])
		v.DeltaStop, _ = m["stop_reason"].(string)
		v.TextRaw, _ = m["text"].(string)
	}
	if hasBlock {
		v.Text, v.Thinking = refBlock(b)
		m, _ := b.(map[string]any)
		v.TextRaw, _ = m["text"].(string)
		v.ToolUse = m["type"] == "tool_use"
	}
	if e, ok := obj["error"].(map[string]any); ok {
		v.Error = true
		v.ErrType, _ = e["type"].(string)
		v.ErrMsg, _ = e["message"].(string)
	}
	f := obj
	if m, ok := obj["message"].(map[string]any); ok {
		f = m
	}
	v.Stop, _ = f["stop_reason"].(string)
	if u, ok := f["usage"].(map[string]any); ok {
		v.Usage = true
		_, v.HasInput = u["input_tokens"]
		v.In, v.Out = refCount(u["input_tokens"]), refCount(u["output_tokens"])
		v.Read, v.Create = refCount(u["cache_read_input_tokens"]), refCount(u["cache_creation_input_tokens"])
	}
	blocks, _ := f["content"].([]any)
	for _, b := range blocks {
		text, thinking := refBlock(b)
		v.Answer, v.Thinks = v.Answer || text, v.Thinks || thinking
		m, _ := b.(map[string]any)
		v.ToolUses = v.ToolUses || m["type"] == "tool_use"
	}
	return v, true
}

func refBlock(b any) (text, thinking bool) {
	m, _ := b.(map[string]any)
	return nonEmpty(m["text"]) || m["type"] == "tool_use", nonEmpty(m["thinking"])
}

var messagesScan = scanCheck[MessagesEvent, messagesView]{scan: ScanMessages, view: viewMessages, reference: referenceMessages}

func TestScanMessages(t *testing.T) {
	t.Parallel()
	tests := []scanCase[messagesView]{
		// A text delta is answer text.
		{"text", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`,
			messagesView{Type: "content_block_delta", Text: true, TextRaw: "Hi"}},
		// A thinking delta is reasoning.
		{"thinking", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`,
			messagesView{Type: "content_block_delta", Thinking: true}},
		// A signature delta is neither.
		{"signature", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}`,
			messagesView{Type: "content_block_delta"}},
		// Tool input JSON is output.
		{"tool input", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`,
			messagesView{Type: "content_block_delta", ToolInput: true}},
		// A tool_use block's start, as Anthropic streams it (input {},
		// then input_json_delta deltas): a tool call, and output.
		{"tool_use start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}}`,
			messagesView{Type: "content_block_start", Text: true, ToolUse: true}},
		// A text block's start is no tool call.
		{"text start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			messagesView{Type: "content_block_start"}},
		// message_start's usage sits in its message.
		{"start", `{"type":"message_start","usage":{"output_tokens":9},"message":{"id":"m","usage":{"input_tokens":25,"cache_read_input_tokens":5,"cache_creation_input_tokens":2,"output_tokens":1}}}`,
			messagesView{Type: "message_start", Usage: true, HasInput: true, In: 25, Read: 5, Create: 2, Out: 1}},
		// message_delta's stop_reason sits in its delta, the usage at the top.
		{"delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`,
			messagesView{Type: "message_delta", DeltaStop: "end_turn", Usage: true, Out: 15}},
		// An error.
		{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			messagesView{Type: "error", Error: true, ErrType: "overloaded_error", ErrMsg: "Overloaded"}},
		// A whole reply: thinking and text blocks.
		{"whole", `{"type":"message","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"a"}],"stop_reason":"max_tokens","usage":{"input_tokens":3,"output_tokens":4}}`,
			messagesView{Type: "message", Stop: "max_tokens", Usage: true, HasInput: true, In: 3, Out: 4, Answer: true, Thinks: true}},
		// A whole reply that calls a tool after some text.
		{"whole tool_use", `{"type":"message","content":[{"type":"text","text":"Let me check."},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"location":"Paris"}}],"stop_reason":"tool_use"}`,
			messagesView{Type: "message", Stop: "tool_use", Answer: true, ToolUses: true}},
	}
	messagesScan.table(t, tests)
}

// FuzzMessages checks ScanMessages against encoding/json.
func FuzzMessages(f *testing.F) {
	f.Add([]byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`))
	f.Add([]byte(`{"type":"message_start","message":{"id":"m","usage":{"input_tokens":25,"cache_read_input_tokens":5,"output_tokens":1}}}`))
	f.Add([]byte(`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`))
	f.Add([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	f.Add([]byte(`{"content":[{"type":"tool_use","id":"t","input":{}},{"type":"text","text":"a"}],"stop_reason":"tool_use","usage":{"input_tokens":3}}`))
	f.Add([]byte(`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}`))
	messagesScan.fuzz(f)
}

func TestRenderMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body OpenAIBody
		want string
	}{
		// A prompt is one user message; max_tokens as asked.
		{"prompt", OpenAIBody{Model: "m", Prompt: "hi", MaxTokens: 16, Stream: true, IncludeUsage: true, IgnoreEOS: true},
			`{"max_tokens":16,"messages":[{"role":"user","content":"hi"}],"model":"m","stream":true}`},
		// System messages go to system, joined.
		{"system", OpenAIBody{Messages: []ChatMessage{{Role: "system", Content: "a"}, {Role: "system", Content: "b"},
			{Role: "user", Content: "c"}, {Role: "assistant", Content: "d"}, {Role: "user", Content: "e"}}, MaxTokens: 8},
			`{"max_tokens":8,"messages":[{"role":"user","content":"c"},{"role":"assistant","content":"d"},{"role":"user","content":"e"}],"stream":false,"system":"a\n\nb"}`},
		// Extra fields go in last (thinking budgets).
		{"extra", OpenAIBody{Prompt: "x", MaxTokens: 8, Extra: map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}}},
			`{"max_tokens":8,"messages":[{"role":"user","content":"x"}],"stream":false,"thinking":{"budget_tokens":1024,"type":"enabled"}}`},
	}
	for _, tt := range tests {
		got, err := tt.body.Render(APIMessages)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if string(got) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// The Messages API's headers: the key as x-api-key (no bearer token),
// anthropic-version, and target.headers over both; the other APIs keep
// the bearer token and no version. A 529 with Anthropic's error body is
// http_5xx with its message, the key never in it.
func TestMessagesHeaders(t *testing.T) {
	t.Parallel()
	type seen struct{ key, auth, version string }
	got := make(chan seen, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"), r.Header.Get("Anthropic-Version")}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(529)
		_, _ = w.Write([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded ` + testKey + `"}}`))
	}))
	defer srv.Close()
	tests := []struct {
		name    string
		api     API
		headers map[string]string
		want    seen
	}{
		{"messages", APIMessages, nil, seen{key: testKey, version: AnthropicVersion}},
		{"version overridden", APIMessages, map[string]string{"anthropic-version": "2099-01-01"}, seen{key: testKey, version: "2099-01-01"}},
		{"chat", APIChat, nil, seen{auth: "Bearer " + testKey}},
	}
	for _, tt := range tests {
		c := newClient(t, srv.URL+"/v1", func(o *OpenAIOptions) { o.Headers = tt.headers })
		tr := doTrace(t, c, apiRequest(tt.api, true))
		if h := <-got; h != tt.want {
			t.Errorf("%s: headers %+v, want %+v", tt.name, h, tt.want)
		}
		if tr.Err != record.ErrHTTP5xx || !strings.Contains(tr.ErrMsg, "Overloaded") || strings.Contains(tr.ErrMsg, testKey) {
			t.Errorf("%s: %s %q, want http_5xx with the message, key redacted", tt.name, tr.Err, tr.ErrMsg)
		}
	}
}

// messagesDelta is a typical Messages API text delta, as Anthropic sends
// it.
const messagesDelta = "event: content_block_delta\n" +
	`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" learning"}}` + "\n\n"

// BenchmarkMessagesEventPath is the Messages API's per-token path: SSE
// parse, ScanMessages and the fold into the trace. One op is one event.
func BenchmarkMessagesEventPath(b *testing.B) {
	fold := func(cl *call, e *MessagesEvent, a arrival) error {
		_, err := cl.messagesEvent(e, a)
		return err
	}
	benchTokenPath(b, sseEvents(messagesDelta), ScanMessages, func(e *MessagesEvent) bool { return e.Text }, fold)
}
