package protocol

import (
	"strings"
	"testing"
)

// TestTakesIgnoreEOS: only chat and completions send ignore_eos (vLLM's,
// SGLang's and llama.cpp's extension), so only their records may claim
// it; a record of any other API that claimed it made the "ignore_eos not
// honoured" check misfire against TGI, Ollama and the rest. Each API's
// rendered body agrees.
func TestTakesIgnoreEOS(t *testing.T) {
	t.Parallel()
	for _, api := range APIs() {
		want := api == APIChat || api == APICompletions
		if got := api.TakesIgnoreEOS(); got != want {
			t.Errorf("%s: TakesIgnoreEOS %v, want %v", api, got, want)
		}
		if api == APIHTTP || api == APITritonGRPC || api == APITranscriptions || api == APIRealtime {
			continue // templated, protobuf, multipart and WebSocket bodies
		}
		body, err := OpenAIBody{Model: "m", Prompt: "p", MaxTokens: 4, Stream: true, IgnoreEOS: true}.Render(api)
		if err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		if sent := strings.Contains(string(body), "ignore_eos"); sent != want {
			t.Errorf("%s: body %s sends ignore_eos %v, want %v", api, body, sent, want)
		}
	}
}
