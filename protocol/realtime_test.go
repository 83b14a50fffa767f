package protocol

import (
	"testing"
)

// realtimeView is what the tests compare of a RealtimeEvent.
type realtimeView struct {
	Type, Status, Reason string
	Delta, Usage         bool
	In, Out, Cached      int
	ErrType, ErrCode     string
	ErrMsg               string
}

func viewRealtime(e *RealtimeEvent) realtimeView {
	f := &e.Response
	return realtimeView{Type: decodeJSONString(e.Type), Status: decodeJSONString(f.Status), Reason: decodeJSONString(f.Incomplete),
		Delta: e.Delta, Usage: f.Usage, In: f.Input, Out: f.Output, Cached: f.Cached,
		ErrType: decodeJSONString(e.ErrorType), ErrCode: decodeJSONString(e.ErrorCode), ErrMsg: decodeJSONString(e.ErrorMessage)}
}

// referenceRealtime reads data as encoding/json does, for FuzzRealtime.
func referenceRealtime(data []byte) (realtimeView, bool) {
	obj, ok := referenceObject(data)
	if !ok {
		return realtimeView{}, false
	}
	var v realtimeView
	v.Type, _ = obj["type"].(string)
	v.Delta = nonEmpty(obj["delta"])
	if r, ok := obj["response"].(map[string]any); ok {
		v.Status, _ = r["status"].(string)
		if d, ok := r["status_details"].(map[string]any); ok {
			v.Reason, _ = d["reason"].(string)
		}
		if u, ok := r["usage"].(map[string]any); ok {
			v.Usage = true
			v.In, v.Out = refCount(u["input_tokens"]), refCount(u["output_tokens"])
			if d, ok := u["input_token_details"].(map[string]any); ok {
				v.Cached = refCount(d["cached_tokens"])
			}
		}
	}
	if e, ok := obj["error"].(map[string]any); ok {
		v.ErrType, _ = e["type"].(string)
		v.ErrCode, _ = e["code"].(string)
		v.ErrMsg, _ = e["message"].(string)
	}
	return v, true
}

var realtimeScan = scanCheck[RealtimeEvent, realtimeView]{scan: ScanRealtime, view: viewRealtime, reference: referenceRealtime}

func TestScanRealtime(t *testing.T) {
	t.Parallel()
	tests := []scanCase[realtimeView]{
		// A text delta (GA name).
		{"text", `{"type":"response.output_text.delta","event_id":"e1","response_id":"r","item_id":"i","output_index":0,"content_index":0,"delta":"Hello"}`,
			realtimeView{Type: "response.output_text.delta", Delta: true}},
		// An audio delta: base64 audio is output too.
		{"audio", `{"type":"response.output_audio.delta","delta":"UklGRg=="}`, realtimeView{Type: "response.output_audio.delta", Delta: true}},
		// response.done cut by max_output_tokens, with usage.
		{"done", `{"type":"response.done","response":{"id":"r","object":"realtime.response","status":"incomplete","status_details":{"type":"incomplete","reason":"max_output_tokens"},"usage":{"total_tokens":40,"input_tokens":24,"output_tokens":16,"input_token_details":{"cached_tokens":8,"text_tokens":24}}}}`,
			realtimeView{Type: "response.done", Status: "incomplete", Reason: "max_output_tokens", Usage: true, In: 24, Out: 16, Cached: 8}},
		// An error event.
		{"error", `{"type":"error","event_id":"e","error":{"type":"invalid_request_error","code":"invalid_value","message":"bad","param":null}}`,
			realtimeView{Type: "error", ErrType: "invalid_request_error", ErrCode: "invalid_value", ErrMsg: "bad"}},
	}
	realtimeScan.table(t, tests)
}

// FuzzRealtime checks ScanRealtime against encoding/json.
func FuzzRealtime(f *testing.F) {
	f.Add([]byte(`{"type":"response.output_text.delta","delta":"Hello"}`))
	f.Add([]byte(`{"type":"response.done","response":{"status":"completed","status_details":null,"usage":{"input_tokens":24,"output_tokens":16,"input_token_details":{"cached_tokens":8}}}}`))
	f.Add([]byte(`{"type":"error","error":{"type":"server_error","code":"internal_error","message":"x"}}`))
	realtimeScan.fuzz(f)
}

// realtimeDelta is a typical realtime text delta event.
var realtimeDelta = []byte(`{"type":"response.output_text.delta","event_id":"event_4","response_id":"resp_1","item_id":"item_1","output_index":0,"content_index":0,"delta":" blue"}`)

// BenchmarkRealtimeEventPath is the realtime session's per-token path past
// the WebSocket read: ScanRealtime and the fold into the trace. One op is
// one event.
func BenchmarkRealtimeEventPath(b *testing.B) {
	cl := benchCall()
	var e RealtimeEvent
	b.ReportAllocs()
	for b.Loop() {
		if err := ScanRealtime(realtimeDelta, &e); err != nil || !e.Delta {
			b.Fatal(err)
		}
		if _, err := cl.realtimeEvent(&e, realtimeDelta, arrival{}); err != nil {
			b.Fatal(err)
		}
		cl.rewind()
	}
}
