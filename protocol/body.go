package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// OpenAIBody describes one request body for the OpenAI APIs. Render turns
// it into JSON once, before the request is due.
type OpenAIBody struct {
	// Model is sent as "model" when not empty (llama.cpp ignores it).
	Model string
	// Prompt is the user message (chat) or the prompt (completions).
	Prompt string
	// Messages, when set, is the whole chat conversation (a system prompt,
	// earlier turns, then the user message) and replaces Prompt for the
	// chat API; the completions API always sends Prompt.
	Messages []ChatMessage
	// MaxTokens is sent as "max_tokens" (or the API's own name for it)
	// when positive, or always with ExplicitMaxTokens.
	MaxTokens int
	// ExplicitMaxTokens sends MaxTokens even when it is 0 or negative: a
	// bad-input request asking for no tokens must say so.
	ExplicitMaxTokens bool
	// Stream asks for an SSE reply.
	Stream bool
	// IncludeUsage asks a streaming reply for a final usage chunk
	// (stream_options.include_usage); ignored when not streaming, where
	// usage always comes with the reply.
	IncludeUsage bool
	// IgnoreEOS asks the server (vLLM, SGLang, llama.cpp) to generate
	// exactly MaxTokens tokens; sent only when true.
	IgnoreEOS bool
	// Class, InputTokens and Template serve the http API: Template is its
	// body (nil: no body), rendered with Prompt (or the conversation),
	// InputTokens, MaxTokens and Class as its placeholders' values.
	Class       string
	InputTokens int
	Template    *Template
	// Tensors names the triton-infer API's tensors.
	Tensors TritonTensors
	// Extra fields are merged in last and may override any of the above
	// (temperature, top_p, min_tokens, ...). If Extra overrides "stream",
	// the Request's Stream flag must say the same.
	Extra map[string]any
}

// Render returns the JSON body for api (the native APIs' bodies are
// described in renderNative). Keys are sorted, so the same body
// always renders to the same bytes.
func (b OpenAIBody) Render(api API) ([]byte, error) {
	m := make(map[string]any, 6+len(b.Extra))
	switch api {
	case APIChat:
		m["messages"] = b.chatMessages()
	case APICompletions:
		m["prompt"] = b.Prompt
	case APIEmbeddings:
		return encodeBody(b.renderEmbeddings())
	case APITritonInfer:
		return encodeBody(b.renderTritonInfer())
	case APIHTTP:
		if b.Template == nil {
			return nil, nil
		}
		return b.Template.Render(TemplateFields{Prompt: b.flatPrompt(), InputTokens: b.InputTokens,
			MaxTokens: b.MaxTokens, Class: b.Class}), nil
	default:
		if native, ok := b.renderNative(api); ok {
			return encodeBody(native)
		}
		return nil, fmt.Errorf("render body: unknown API %q (want %s)", api, APINames())
	}
	if b.Model != "" {
		m["model"] = b.Model
	}
	if b.sendMaxTokens() {
		m["max_tokens"] = b.MaxTokens
	}
	m["stream"] = b.Stream
	if b.Stream && b.IncludeUsage {
		m["stream_options"] = map[string]bool{"include_usage": true}
	}
	if b.IgnoreEOS {
		m["ignore_eos"] = true
	}
	for k, v := range b.Extra {
		m[k] = v
	}
	return encodeBody(m)
}

// encodeBody renders m as compact JSON with sorted keys.
func encodeBody(m map[string]any) ([]byte, error) {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // prompts are data, not HTML: keep '<' as is
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("render body: %w", err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// ChatMessage is one message of a chat conversation.
type ChatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatMessages is the conversation to send: Messages, or Prompt as the one
// user message.
func (b OpenAIBody) chatMessages() []ChatMessage {
	if len(b.Messages) > 0 {
		return b.Messages
	}
	return []ChatMessage{{Role: "user", Content: b.Prompt}}
}

// sendMaxTokens reports whether the body carries MaxTokens.
func (b OpenAIBody) sendMaxTokens() bool { return b.MaxTokens > 0 || b.ExplicitMaxTokens }
