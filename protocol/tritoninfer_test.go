package protocol

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferload/inferload/record"
)

// The /infer body: the prompt as a [1, 1] BYTES tensor in the named
// input, the output asked for by name, Extra at the top level; no
// max_tokens or stream.
func TestRenderTritonInfer(t *testing.T) {
	t.Parallel()
	b, err := OpenAIBody{Prompt: `a "b"`, MaxTokens: 9, Stream: true, Extra: map[string]any{"id": "r1"},
		Tensors: TritonTensors{Input: "INPUT_TEXT", Output: "LOGITS"}}.Render(APITritonInfer)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"r1","inputs":[{"data":["a \"b\""],"datatype":"BYTES","name":"INPUT_TEXT","shape":[1,1]}],"outputs":[{"name":"LOGITS"}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, _ = OpenAIBody{Prompt: "x"}.Render(APITritonInfer)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["outputs"] != nil || !strings.Contains(string(b), `"name":"TEXT"`) {
		t.Errorf("defaults: %s (%v): want input TEXT and no outputs", b, err)
	}
}

// Each /infer reply, whole and in 7-byte pieces: what succeeds, and how
// what does not is classified.
func TestTritonInferReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, output, body string
		err                record.ErrorKind
		msg                string
	}{
		// The reply's first output holds a label.
		{"first output", "", `{"model_name":"bert","model_version":"1","outputs":[{"name":"LABEL","datatype":"BYTES","shape":[1,1],"data":["positive"]}]}`, record.ErrNone, ""},
		// The named output among several, numbers as data.
		{"named output", "PROBS", `{"model_name":"bert","outputs":[{"name":"LABEL","data":["x"]},{"name":"PROBS","datatype":"FP32","shape":[1,2],"data":[0.1,0.9]}]}`, record.ErrNone, ""},
		// The named output missing: the reply's outputs are named.
		{"missing output", "PROBS", `{"outputs":[{"name":"LABEL","data":["x"]}]}`, record.ErrEmptyOutput, "no output tensor PROBS (it holds LABEL)"},
		// An output without data.
		{"empty data", "", `{"outputs":[{"name":"LABEL","data":[]}]}`, record.ErrEmptyOutput, "has no data"},
		// No outputs at all.
		{"no outputs", "", `{"model_name":"bert","outputs":[]}`, record.ErrEmptyOutput, "no output tensor"},
		// The protocol's error object in a 200.
		{"error", "", `{"error":"failed to run the model"}`, record.ErrStreamErrorEvent, "failed to run the model"},
		// Not JSON.
		{"malformed", "", `{"outputs":[{"name":`, record.ErrMalformedEvent, "infer reply"},
	}
	for _, tt := range tests {
		for _, size := range []int{0, 7} {
			t.Run(fmt.Sprintf("%s/pieces=%d", tt.name, size), func(t *testing.T) {
				t.Parallel()
				srv := httptest.NewServer(serveTranscriptAs([]byte(tt.body), size, "application/json", nil))
				defer srv.Close()
				c := newClient(t, srv.URL, func(o *OpenAIOptions) { o.Model = "bert"; o.Triton.Output = tt.output })
				body, _ := OpenAIBody{Prompt: "hi"}.Render(APITritonInfer)
				got := doTrace(t, c, &Request{API: APITritonInfer, Body: body, Stream: true})
				if got.Err != tt.err || !strings.Contains(got.ErrMsg, tt.msg) {
					t.Fatalf("%s %q, want %s %q", got.Err, got.ErrMsg, tt.err, tt.msg)
				}
				if tt.err == record.ErrNone {
					view := []any{got.FirstToken.Equal(got.End), got.ContentEvents, got.BytesIn}
					if diff := cmp.Diff([]any{true, 0, int64(len(tt.body))}, view); diff != "" {
						t.Errorf("first token = end, events, bytes in (-want +got):\n%s", diff)
					}
				}
			})
		}
	}
}
