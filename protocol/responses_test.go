package protocol

import (
	"testing"
)

// responsesView is a ResponsesEvent with decoded strings, comparable with
// cmp.
type responsesView struct {
	Type          string
	Delta         bool
	Code, Message string
	ID, Status    string
	Usage         bool
	In, Out, R, C int
	Incomplete    string
	Error         bool
	ErrCode       string
	ErrMsg        string
	Text, Reason  bool
}

func viewResponses(e *ResponsesEvent) responsesView {
	f := &e.Response
	return responsesView{Type: decodeJSONString(e.Type), Delta: e.Delta,
		Code: decodeJSONString(e.Code), Message: decodeJSONString(e.Message),
		ID: decodeJSONString(f.ID), Status: decodeJSONString(f.Status), Usage: f.Usage,
		In: f.Input, Out: f.Output, R: f.ReasoningTokens, C: f.Cached, Incomplete: decodeJSONString(f.Incomplete),
		Error: f.Error, ErrCode: decodeJSONString(f.ErrorCode), ErrMsg: decodeJSONString(f.ErrorMessage),
		Text: f.Text, Reason: f.Reasoning}
}

// referenceResponses reads data as encoding/json does, for
// FuzzResponses: the response's fields come from a "response" object when
// there is one, else from the object's own members.
func referenceResponses(data []byte) (responsesView, bool) {
	obj, ok := referenceObject(data)
	if !ok {
		return responsesView{}, false
	}
	var v responsesView
	v.Type, _ = obj["type"].(string)
	v.Delta = nonEmpty(obj["delta"])
	v.Code, _ = obj["code"].(string)
	v.Message, _ = obj["message"].(string)
	f := obj
	if r, ok := obj["response"].(map[string]any); ok {
		f = r
	}
	v.ID, _ = f["id"].(string)
	v.Status, _ = f["status"].(string)
	if u, ok := f["usage"].(map[string]any); ok {
		v.Usage = true
		v.In, v.Out = refCount(u["input_tokens"]), refCount(u["output_tokens"])
		if d, ok := u["input_tokens_details"].(map[string]any); ok {
			v.C = refCount(d["cached_tokens"])
		}
		if d, ok := u["output_tokens_details"].(map[string]any); ok {
			v.R = refCount(d["reasoning_tokens"])
		}
	}
	if d, ok := f["incomplete_details"].(map[string]any); ok {
		v.Incomplete, _ = d["reason"].(string)
	}
	if e, ok := f["error"].(map[string]any); ok {
		v.Error = true
		v.ErrCode, _ = e["code"].(string)
		v.ErrMsg, _ = e["message"].(string)
	}
	items, _ := f["output"].([]any)
	for _, it := range items {
		item, _ := it.(map[string]any)
		text := refPartsText(item["content"]) || refPartsText(item["summary"])
		switch item["type"] {
		case "reasoning":
			v.Reason = v.Reason || text
		case "function_call":
			v.Text = true
		default:
			v.Text = v.Text || text
		}
	}
	return v, true
}

func refPartsText(parts any) bool {
	list, _ := parts.([]any)
	for _, p := range list {
		if m, ok := p.(map[string]any); ok && (nonEmpty(m["text"]) || nonEmpty(m["refusal"])) {
			return true
		}
	}
	return false
}

var responsesScan = scanCheck[ResponsesEvent, responsesView]{scan: ScanResponses, view: viewResponses, reference: referenceResponses}

func TestScanResponses(t *testing.T) {
	t.Parallel()
	tests := []scanCase[responsesView]{
		// A text delta.
		{"delta", `{"type":"response.output_text.delta","sequence_number":4,"item_id":"m","delta":"Hi"}`,
			responsesView{Type: "response.output_text.delta", Delta: true}},
		// An empty delta carries nothing.
		{"empty delta", `{"type":"response.output_text.delta","delta":""}`, responsesView{Type: "response.output_text.delta"}},
		// The id comes from the event's response object, not its members.
		{"created", `{"id":"no","type":"response.created","response":{"id":"resp_1","status":"in_progress","usage":null}}`,
			responsesView{Type: "response.created", ID: "resp_1", Status: "in_progress"}},
		// The final usage.
		{"completed", `{"type":"response.completed","response":{"id":"r","status":"completed","usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":4},"output_tokens":30,"output_tokens_details":{"reasoning_tokens":20}}}}`,
			responsesView{Type: "response.completed", ID: "r", Status: "completed", Usage: true, In: 12, Out: 30, R: 20, C: 4}},
		// Cut at max_output_tokens.
		{"incomplete", `{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}`,
			responsesView{Type: "response.incomplete", Status: "incomplete", Incomplete: "max_output_tokens"}},
		// A failed response's error object.
		{"failed", `{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}`,
			responsesView{Type: "response.failed", Status: "failed", Error: true, ErrCode: "server_error", ErrMsg: "boom"}},
		// An error event's own code and message.
		{"error event", `{"type":"error","code":"rate_limit_exceeded","message":"slow down","param":null}`,
			responsesView{Type: "error", Code: "rate_limit_exceeded", Message: "slow down"}},
		// A whole reply: reasoning item and message text.
		{"whole", `{"id":"r","status":"completed","error":null,"output":[{"type":"reasoning","summary":[{"type":"summary_text","text":"t"}]},{"type":"message","content":[{"type":"output_text","text":"a"}]}]}`,
			responsesView{ID: "r", Status: "completed", Text: true, Reason: true}},
		// A whole reply with only reasoning (cut while reasoning).
		{"reasoning only", `{"output":[{"type":"reasoning","content":[{"type":"reasoning_text","text":"t"}]},{"type":"message","content":[{"type":"output_text","text":""}]}]}`,
			responsesView{Reason: true}},
		// A refusal is answer output.
		{"refusal", `{"output":[{"type":"message","content":[{"type":"refusal","refusal":"no"}]}]}`, responsesView{Text: true}},
	}
	responsesScan.table(t, tests)
}

// FuzzResponses checks ScanResponses against encoding/json.
func FuzzResponses(f *testing.F) {
	f.Add([]byte(`{"type":"response.output_text.delta","sequence_number":4,"item_id":"m","delta":"Hi"}`))
	f.Add([]byte(`{"type":"response.completed","response":{"id":"r","status":"completed","usage":{"input_tokens":1,"input_tokens_details":{"cached_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":1}}}}`))
	f.Add([]byte(`{"type":"error","code":"x","message":"y"}`))
	f.Add([]byte(`{"id":"r","output":[{"type":"reasoning","summary":[{"text":"a"}]},{"type":"message","content":[{"type":"output_text","text":"b"}]}],"error":{"code":"c"}}`))
	responsesScan.fuzz(f)
}

func TestRenderResponses(t *testing.T) {
	t.Parallel()
	conv := []ChatMessage{{Role: "system", Content: "be brief"}, {Role: "user", Content: "a"},
		{Role: "assistant", Content: "b"}, {Role: "user", Content: "c"}}
	tests := []struct {
		name string
		body OpenAIBody
		want string
	}{
		// One prompt is the input string; max_output_tokens bounds it.
		{"prompt", OpenAIBody{Model: "m", Prompt: "hi", MaxTokens: 16, Stream: true, IncludeUsage: true, IgnoreEOS: true},
			`{"input":"hi","max_output_tokens":16,"model":"m","stream":true}`},
		// A conversation without a previous response is sent whole.
		{"history", OpenAIBody{Messages: conv},
			`{"input":[{"role":"system","content":"be brief"},{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}],"stream":false}`},
		// With one, the server holds the history: only the new turn goes.
		{"previous", OpenAIBody{Messages: conv, PreviousResponseID: "resp_1"},
			`{"input":[{"role":"user","content":"c"}],"previous_response_id":"resp_1","stream":false}`},
		// Extra fields go in last.
		{"extra", OpenAIBody{Prompt: "x", Extra: map[string]any{"reasoning": map[string]any{"effort": "low"}}},
			`{"input":"x","reasoning":{"effort":"low"},"stream":false}`},
	}
	for _, tt := range tests {
		got, err := tt.body.Render(APIResponses)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if string(got) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// responsesDelta is a typical Responses API text delta, as OpenAI sends it.
const responsesDelta = "event: response.output_text.delta\n" +
	`data: {"type":"response.output_text.delta","sequence_number":12,"item_id":"msg_67ccd2bf17f0819081ff3bb2cf6508e6",` +
	`"output_index":0,"content_index":0,"delta":" learning","logprobs":[]}` + "\n\n"

// BenchmarkResponsesEventPath is the Responses API's per-token path: SSE
// parse, ScanResponses and the fold into the trace. One op is one event.
func BenchmarkResponsesEventPath(b *testing.B) {
	fold := func(cl *call, e *ResponsesEvent, a arrival) error {
		_, err := cl.responsesEvent(e, a)
		return err
	}
	benchTokenPath(b, sseEvents(responsesDelta), ScanResponses, func(e *ResponsesEvent) bool { return e.Delta }, fold)
}
