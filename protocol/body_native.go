package protocol

import (
	"maps"
	"strings"

	"github.com/inferload/inferload/internal/tritonpb"
)

// renderNative builds the body of a native API's request, or false for an
// API that is not one. Extra goes where each API keeps its optional
// fields, and may override the rest. None of these APIs has ignore_eos,
// so IgnoreEOS is not sent (docs/apis.md).
func (b OpenAIBody) renderNative(api API) (map[string]any, bool) {
	switch api {
	case APITGI:
		// TGI: {"inputs", "parameters": {...}}; details asks for the
		// finish reason and token counts. Streaming is the endpoint's
		// choice (/generate_stream), not a field.
		params := map[string]any{"details": true}
		if b.sendMaxTokens() {
			params["max_new_tokens"] = b.MaxTokens
		}
		maps.Copy(params, b.Extra)
		return map[string]any{"inputs": b.flatPrompt(), "parameters": params}, true
	case APIOllama:
		if b.carriesTools() {
			return b.renderOllama("messages", ollamaTurns(b.chatMessages())), true
		}
		return b.renderOllama("messages", b.chatMessages()), true
	case APIOllamaGenerate:
		return b.renderOllama("prompt", b.flatPrompt()), true
	case APITriton:
		// The generate extension maps JSON members onto the model's
		// inputs: text_input, max_tokens and stream are the names of the
		// TensorRT-LLM ensemble's (and most LLM models') inputs.
		m := map[string]any{tritonpb.TextInput: b.flatPrompt(), tritonpb.Stream: b.Stream}
		if b.sendMaxTokens() {
			m[tritonpb.MaxTokens] = b.MaxTokens
		}
		maps.Copy(m, b.Extra)
		return m, true
	case APITorchServe:
		// A TorchServe handler reads whatever its author chose; prompt,
		// max_new_tokens and stream are what the LLM examples read, and
		// target.body adds or overrides the rest.
		m := map[string]any{"prompt": b.flatPrompt(), "stream": b.Stream}
		if b.sendMaxTokens() {
			m["max_new_tokens"] = b.MaxTokens
		}
		maps.Copy(m, b.Extra)
		return m, true
	}
	return nil, false
}

// renderOllama builds an /api/chat body (input "messages") or an
// /api/generate one (input "prompt", the text as it is, templated by the
// server): num_predict lives in options, merged into any options Extra
// brings.
func (b OpenAIBody) renderOllama(key string, input any) map[string]any {
	m := map[string]any{key: input, "stream": b.Stream}
	if b.Model != "" {
		m["model"] = b.Model
	}
	opts := map[string]any{}
	if b.sendMaxTokens() {
		opts["num_predict"] = b.MaxTokens
	}
	for k, v := range b.Extra {
		if k == "options" {
			if o, ok := v.(map[string]any); ok {
				maps.Copy(opts, o)
				continue
			}
		}
		m[k] = v
	}
	if len(opts) > 0 {
		m["options"] = opts
	}
	return m
}

// flatPrompt is the prompt for an API that takes one text: Prompt, or a
// conversation's message contents joined by blank lines.
func (b OpenAIBody) flatPrompt() string {
	if len(b.Messages) == 0 {
		return b.Prompt
	}
	parts := make([]string, len(b.Messages))
	for k, m := range b.Messages {
		parts[k] = m.Content
	}
	return strings.Join(parts, "\n\n")
}
