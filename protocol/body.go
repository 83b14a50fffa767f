package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
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
	// Images are sent with Prompt as image_url content parts (the
	// Messages API's image blocks) when Messages is empty (a message
	// carries its own). Only the APIs whose messages carry images
	// (API.SendsImages) send them, and http through its template: Render
	// fails for any other with images to send.
	Images []Image
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
	// PreviousResponseID, for the Responses API, is the id of the
	// conversation's previous reply: the server holds the history, so
	// only the new turn is sent with it (renderResponses). Other APIs
	// ignore it.
	PreviousResponseID string
	// Tensors names the triton-infer API's tensors.
	Tensors TritonTensors
	// Documents are what the rerank and score APIs score Prompt (the
	// query) against; other APIs ignore them.
	Documents []string
	// Audio is the transcriptions API's upload, a whole audio file (a
	// WAV); other APIs ignore it.
	Audio []byte
	// Extra fields are merged in last and may override any of the above
	// (temperature, top_p, min_tokens, ...). If Extra overrides "stream",
	// the Request's Stream flag must say the same.
	Extra map[string]any
}

// Render returns the JSON body for api (the native APIs' bodies are
// described in renderNative). Keys are sorted, so the same body
// always renders to the same bytes.
func (b OpenAIBody) Render(api API) ([]byte, error) {
	if !api.SendsImages() && api != APIHTTP && b.hasImages() {
		return nil, fmt.Errorf("render body: the %s API cannot send images (chat sends image_url parts, messages image blocks, http a template's {{image}})", api)
	}
	if out, ok := b.renderPlain(api); ok {
		return out, nil
	}
	return b.renderMap(api)
}

// SendsImages reports whether a's messages carry images: chat as
// image_url parts, messages as image blocks (messages_images.go). The
// http API sends one through its body template only, and every other
// API none.
func (a API) SendsImages() bool { return a == APIChat || a == APIMessages }

// renderTemplate renders the http API's body template. The request's
// first image fills {{image}} and {{image_url}}; an image the template has
// no place for, or one {{image}} cannot carry, is an error rather than a
// request sent without it.
func (b OpenAIBody) renderTemplate() ([]byte, error) {
	img, n := b.firstImage()
	if b.Template == nil {
		if n > 0 {
			return nil, errors.New("render body: the http API has no body template: its images cannot be sent")
		}
		return nil, nil
	}
	if n > 0 {
		if !b.Template.TakesImages() {
			return nil, fmt.Errorf("render body: %d image(s) to send but the http API's body template has no %s or %s", n, ImagePlaceholder, ImageURLPlaceholder)
		}
		if _, ok := ImageData(img); !ok && b.Template.Has(ImagePlaceholder) {
			return nil, fmt.Errorf("render body: %s needs a base64 data URI, not %.40q (use %s)", ImagePlaceholder, img, ImageURLPlaceholder)
		}
	}
	return b.Template.Render(TemplateFields{Prompt: b.flatPrompt(), InputTokens: b.InputTokens,
		MaxTokens: b.MaxTokens, Class: b.Class, Image: img}), nil
}

// firstImage returns the URL of the body's first image and how many it
// has: Images with Prompt, or each message's when Messages is set (Images
// is then not sent). Every request asks, so it allocates nothing.
func (b OpenAIBody) firstImage() (string, int) {
	if len(b.Messages) == 0 {
		if len(b.Images) == 0 {
			return "", 0
		}
		return b.Images[0].URL, len(b.Images)
	}
	var first string
	n := 0
	for _, m := range b.Messages {
		if n == 0 && len(m.Images) > 0 {
			first = m.Images[0].URL
		}
		n += len(m.Images)
	}
	return first, n
}

// renderMap is Render through a map of the body's fields and
// encoding/json: every body renderPlain does not write.
func (b OpenAIBody) renderMap(api API) ([]byte, error) {
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
	case APITritonGRPC:
		return b.renderTritonGRPC()
	case APIHTTP:
		return b.renderTemplate()
	case APIImages:
		return encodeBody(b.renderImages())
	case APIResponses:
		return encodeBody(b.renderResponses())
	case APIMessages:
		m, err := b.renderMessages()
		if err != nil {
			return nil, err
		}
		return encodeBody(m)
	case APIRerank:
		return encodeBody(b.renderRerank())
	case APIScore:
		return encodeBody(b.renderScore())
	case APIPooling:
		return encodeBody(b.renderPooling())
	case APITranscriptions:
		return b.renderTranscription()
	case APIRealtime:
		return b.renderRealtime()
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
	Role    string
	Content string
	// Images, when set, make the content an array of parts: Content as a
	// "text" part (when not empty), then one "image_url" part per image.
	Images []Image
	// ToolCalls, on an assistant message, are the function calls its
	// reply made; ToolCallID, on a "tool" message, is the id of the call
	// whose result Content is (OpenAI's function-calling messages,
	// messages_tools.go).
	ToolCalls  []ReplyToolCall
	ToolCallID string
}

// Image is one image_url content part.
type Image struct {
	// URL is a data URI (data:image/jpeg;base64,...) or an http(s) URL.
	URL string
	// Detail is the part's "detail" ("low", "high", "auto"); empty leaves
	// it out.
	Detail string
}

// textPart and imagePart are the OpenAI content parts a message sends.
type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type imagePart struct {
	Type     string `json:"type"`
	ImageURL struct {
		URL    string `json:"url"`
		Detail string `json:"detail,omitempty"`
	} `json:"image_url"`
}

// MarshalJSON renders {"role", "content"}: content is a string for a
// text-only message, else an array of content parts.
func (m ChatMessage) MarshalJSON() ([]byte, error) {
	if m.carriesTools() {
		return m.marshalTools()
	}
	if len(m.Images) == 0 {
		return marshalPlain(struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}{m.Role, m.Content})
	}
	parts := make([]any, 0, len(m.Images)+1)
	if m.Content != "" {
		parts = append(parts, textPart{"text", m.Content})
	}
	for _, img := range m.Images {
		p := imagePart{Type: "image_url"}
		p.ImageURL.URL, p.ImageURL.Detail = img.URL, img.Detail
		parts = append(parts, p)
	}
	return marshalPlain(struct {
		Role    string `json:"role"`
		Content []any  `json:"content"`
	}{m.Role, parts})
}

// marshalPlain is json.Marshal without HTML escaping: a MarshalJSON that
// escaped '<' would change prompts that encodeBody keeps as they are.
func marshalPlain(v any) ([]byte, error) {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// chatMessages is the conversation to send: Messages, or Prompt (with
// Images) as the one user message.
func (b OpenAIBody) chatMessages() []ChatMessage {
	if len(b.Messages) > 0 {
		return b.Messages
	}
	return []ChatMessage{{Role: "user", Content: b.Prompt, Images: b.Images}}
}

// hasImages reports whether the body has an image to send.
func (b OpenAIBody) hasImages() bool {
	_, n := b.firstImage()
	return n > 0
}

// sendMaxTokens reports whether the body carries MaxTokens.
func (b OpenAIBody) sendMaxTokens() bool { return b.MaxTokens > 0 || b.ExplicitMaxTokens }
