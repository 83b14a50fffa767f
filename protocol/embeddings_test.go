package protocol

import (
	"testing"

	"github.com/inferload/inferload/record"
)

func TestEmbeddingsReplies(t *testing.T) {
	tests := []struct {
		name   string
		status int
		reply  string
		err    record.ErrorKind
		usage  int // prompt tokens the trace reports; -1: none reported
	}{
		// A normal reply: success, usage.prompt_tokens taken.
		{"ok", 200, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.2]}],"model":"m","usage":{"prompt_tokens":7,"total_tokens":7}}`, record.ErrNone, 7},
		// base64 vectors are strings, still a vector.
		{"base64", 200, `{"data":[{"embedding":"AAAAAA=="}]}`, record.ErrNone, -1},
		// 200 with no vector is not a success.
		{"no data", 200, `{"data":[],"usage":{"prompt_tokens":3}}`, record.ErrEmptyOutput, -1},
		// An error object inside a 200 is the server's error.
		{"error body", 200, `{"error":{"message":"boom"}}`, record.ErrStreamErrorEvent, -1},
		// Garbage is malformed, never a panic.
		{"garbage", 200, `{"data":[`, record.ErrMalformedEvent, -1},
		// A 400 is classified like any HTTP error.
		{"rejected", 400, `{"error":{"message":"input is empty"}}`, record.ErrHTTP4xx, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := OpenAIBody{Model: "m", Prompt: "hello there", MaxTokens: 9, Stream: true, IgnoreEOS: true,
				Extra: map[string]any{"dimensions": 2}}.Render(APIEmbeddings)
			if err != nil {
				t.Fatal(err)
			}
			tr, req := wholeReplyTrace(t, tc.status, tc.reply, &Request{API: APIEmbeddings, Body: body})
			checkEmbeddingsRequest(t, req)
			if tr.Err != tc.err {
				t.Fatalf("error %q (%s), want %q", tr.Err, tr.ErrMsg, tc.err)
			}
			if got := map[bool]int{true: tr.PromptTokens, false: -1}[tr.UsageReported]; got != tc.usage {
				t.Errorf("prompt tokens %d, want %d", got, tc.usage)
			}
			checkNoTokens(t, tr)
		})
	}
}

// checkEmbeddingsRequest checks the path and that the body carries only
// what the embeddings API takes.
func checkEmbeddingsRequest(t *testing.T, req seenRequest) {
	t.Helper()
	if req.Path != "/v1/embeddings" || req.Header.Get("Accept") != "application/json" {
		t.Errorf("sent to %s with Accept %q", req.Path, req.Header.Get("Accept"))
	}
	if req.Body["input"] != "hello there" || req.Body["model"] != "m" || req.Body["dimensions"] != float64(2) {
		t.Errorf("body %v", req.Body)
	}
	for _, k := range []string{"stream", "max_tokens", "ignore_eos", "messages", "prompt"} {
		if _, ok := req.Body[k]; ok {
			t.Errorf("body has %q: %v", k, req.Body)
		}
	}
}
