package protocol

import (
	"testing"

	"github.com/inferload/inferload/record"
)

// tgiView is a TGIEvent with decoded strings, comparable with cmp.
type tgiView struct {
	Token, Final, Text, Details bool
	Finish                      string
	HasFinish                   bool
	Generated, Input            int
	Error                       bool
	ErrMsg, ErrType             string
}

func viewTGI(e *TGIEvent) tgiView {
	return tgiView{Token: e.Token, Final: e.Final, Text: e.Text, Details: e.Details,
		Finish: decodeJSONString(e.FinishReason), HasFinish: e.FinishReason != nil,
		Generated: e.GeneratedTokens, Input: e.InputLength,
		Error: e.Error, ErrMsg: decodeJSONString(e.ErrorMessage), ErrType: decodeJSONString(e.ErrorType)}
}

// referenceTGI reads data as encoding/json does, for FuzzTGI.
func referenceTGI(data []byte) (tgiView, bool) {
	obj, ok := referenceObject(data)
	if !ok {
		return tgiView{}, false
	}
	var v tgiView
	if tok, ok := obj["token"].(map[string]any); ok {
		v.Token = tok["special"] != true
	}
	if text, ok := obj["generated_text"].(string); ok {
		v.Final, v.Text = true, text != ""
	}
	if d, ok := obj["details"].(map[string]any); ok {
		v.Details = true
		v.Finish, v.HasFinish = d["finish_reason"].(string)
		v.Generated, v.Input = refCount(d["generated_tokens"]), refCount(d["input_length"])
	}
	v.Error, v.ErrMsg = referenceError(obj["error"])
	v.ErrType, _ = obj["error_type"].(string)
	return v, true
}

func TestScanTGI(t *testing.T) {
	t.Parallel()
	tests := []scanCase[tgiView]{
		// An ordinary streamed token is output.
		{"token", `{"index":1,"token":{"id":5,"text":"a","logprob":-0.1,"special":false},"generated_text":null,"details":null}`,
			tgiView{Token: true}},
		// The EOS token is special: not output, but the final event.
		{"eos", `{"index":2,"token":{"id":2,"text":"</s>","special":true},"generated_text":"a","details":{"finish_reason":"eos_token","generated_tokens":2,"seed":null,"input_length":9}}`,
			tgiView{Final: true, Text: true, Details: true, Finish: "eos_token", HasFinish: true, Generated: 2, Input: 9}},
		// A token whose text is empty (half a UTF-8 character) is still a token.
		{"empty text", `{"token":{"id":5,"text":"","special":false}}`, tgiView{Token: true}},
		// An empty generated_text still ends the stream.
		{"empty final", `{"generated_text":""}`, tgiView{Final: true}},
		// TGI's error shape.
		{"error", `{"error":"Model is overloaded","error_type":"overloaded"}`,
			tgiView{Error: true, ErrMsg: "Model is overloaded", ErrType: "overloaded"}},
		// A later details object replaces an earlier one entirely.
		{"duplicate details", `{"details":{"finish_reason":"length","generated_tokens":3},"details":{"generated_tokens":4}}`,
			tgiView{Details: true, Generated: 4}},
	}
	tgiScan.table(t, tests)
	for _, bad := range []string{``, `[]`, `{"token":}`, `{"a":1} x`, `{"token":{"special":tru}}`} {
		var e TGIEvent
		if ScanTGI([]byte(bad), &e) == nil {
			t.Errorf("ScanTGI(%q) accepted malformed JSON", bad)
		}
	}
}

// A TGI error inside a 200 reply is classified by its error_type.
func TestTGIErrorKinds(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]record.ErrorKind{
		"overloaded": record.ErrHTTP429, "validation": record.ErrHTTP4xx,
		"generation": record.ErrStreamErrorEvent, "": record.ErrStreamErrorEvent,
	} {
		e := TGIEvent{Error: true, ErrorMessage: []byte("x"), ErrorType: []byte(typ)}
		if f := tgiError(&e).(*failure); f.kind != want {
			t.Errorf("error_type %q: %s, want %s", typ, f.kind, want)
		}
	}
}

// FuzzTGI checks ScanTGI against encoding/json: every valid JSON object
// is accepted and read as encoding/json reads it; nothing panics.
func FuzzTGI(f *testing.F) {
	f.Add([]byte(`{"index":1,"token":{"id":5,"text":"a","logprob":-0.1,"special":false},"generated_text":null,"details":null}`))
	f.Add([]byte(`{"token":{"special":true},"generated_text":"x","details":{"finish_reason":"length","generated_tokens":1,"input_length":3}}`))
	f.Add([]byte(`{"error":"x","error_type":"generation"}`))
	tgiScan.fuzz(f)
}

var tgiScan = scanCheck[TGIEvent, tgiView]{scan: ScanTGI, view: viewTGI, reference: referenceTGI}
