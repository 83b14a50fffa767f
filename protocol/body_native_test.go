package protocol

import "testing"

// Each native API's body puts the prompt and the output cap where that
// API reads them, with Extra merged where the API keeps its options.
func TestRenderNative(t *testing.T) {
	t.Parallel()
	tests := []struct {
		api  API
		body OpenAIBody
		want string
	}{
		// TGI: inputs and parameters; details always asked for.
		{APITGI, OpenAIBody{Prompt: "hi", MaxTokens: 8, Stream: true, Extra: map[string]any{"temperature": 0.5}},
			`{"inputs":"hi","parameters":{"details":true,"max_new_tokens":8,"temperature":0.5}}`},
		// Ollama: chat messages, num_predict merged into the plan's options.
		{APIOllama, OpenAIBody{Model: "m", Prompt: "hi", MaxTokens: 8, Extra: map[string]any{"options": map[string]any{"temperature": 0}, "keep_alive": "5m"}},
			`{"keep_alive":"5m","messages":[{"role":"user","content":"hi"}],"model":"m","options":{"num_predict":8,"temperature":0},"stream":false}`},
		// Ollama's /api/generate: the prompt as one text, the same options.
		{APIOllamaGenerate, OpenAIBody{Model: "m", Prompt: "hi", MaxTokens: 8, Stream: true},
			`{"model":"m","options":{"num_predict":8},"prompt":"hi","stream":true}`},
		{APIOllamaGenerate, OpenAIBody{Model: "m", Messages: []ChatMessage{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}},
			`{"model":"m","prompt":"be brief\n\nhi","stream":false}`},
		// Triton: the TensorRT-LLM ensemble's inputs at the top level.
		{APITriton, OpenAIBody{Prompt: "hi", MaxTokens: 8, Stream: true}, `{"max_tokens":8,"stream":true,"text_input":"hi"}`},
		// TorchServe: what the LLM example handlers read.
		{APITorchServe, OpenAIBody{Prompt: "hi", MaxTokens: 8}, `{"max_new_tokens":8,"prompt":"hi","stream":false}`},
		// A conversation is flattened for the APIs that take one text.
		{APITriton, OpenAIBody{Messages: []ChatMessage{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}}, `{"stream":false,"text_input":"be brief\n\nhi"}`},
		// Bad input sends a zero cap in the API's own field.
		{APITGI, OpenAIBody{Prompt: "", ExplicitMaxTokens: true}, `{"inputs":"","parameters":{"details":true,"max_new_tokens":0}}`},
	}
	for _, tt := range tests {
		got, err := tt.body.Render(tt.api)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: %s, %v\nwant %s", tt.api, got, err, tt.want)
		}
	}
}
