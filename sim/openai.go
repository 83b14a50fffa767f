package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// apiKind is which OpenAI endpoint a request came to.
type apiKind uint8

const (
	apiChat apiKind = iota
	apiCompletions
)

// apiRequest holds the OpenAI request fields the simulator honours; the
// rest (temperature, logprobs, ...) are accepted and ignored.
type apiRequest struct {
	Model               string          `json:"model"`
	Messages            []apiMessage    `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	MinTokens           int             `json:"min_tokens"`
	IgnoreEOS           bool            `json:"ignore_eos"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N *int `json:"n"`
	// ReasoningEffort is OpenAI's reasoning_effort (low, medium, high):
	// the profile's ReasoningEffort picks the reasoning length by it.
	ReasoningEffort string `json:"reasoning_effort"`
	// Tools are the functions a chat request offers (tools.go).
	Tools []apiTool `json:"tools"`
}

type apiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	// ToolCalls, on an assistant message sent back with a tool's result
	// (a "tool" message, whose content counts as any), are the calls its
	// reply made: their names and arguments are prompt tokens too.
	ToolCalls []apiToolCall `json:"tool_calls"`
	// ToolCallID, on a "tool" message, names the call it answers.
	ToolCallID string `json:"tool_call_id"`
}

// apiToolCall is one call of an assistant message's tool_calls.
type apiToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// generation is a validated request: what to compute and how to answer.
type generation struct {
	api          apiKind
	stream       bool
	includeUsage bool
	promptTokens int
	hashes       []uint64
	// hasher holds the prompt's hash state, for the reply's blocks
	// (sequenceHashes); nil where the prompt was not hashed.
	hasher    *PromptHasher
	maxTokens int // explicit, or what is left of the context
	minTokens int
	effort    string // reasoning_effort, as sent
	ignoreEOS bool
	details   bool       // TGI's parameters.details
	infer     *inferCall // a v2 /infer request's id and batch
	scored    *scoreCall // a rerank, score or pooling request's documents
	batch     bool       // the prompt is sequences read apart (Request.Batch)
	// held is the conversation a server holding history keeps with the
	// reply (the Responses API); nil for the other APIs.
	held []apiMessage
	// toolCall is the function the reply calls instead of answering
	// (toolCallOf), "" for a reply of text.
	toolCall string
}

// apiError is an error answered with OpenAI's error body.
type apiError struct {
	status int
	typ    string
	param  string
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(param, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", param: param, msg: fmt.Sprintf(format, args...)}
}

// body renders OpenAI's error shape:
// {"error":{"message":…,"type":…,"param":…|null,"code":…|null}}.
func (e *apiError) body() []byte {
	var v struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	v.Error.Message, v.Error.Type = e.msg, e.typ
	if e.param != "" {
		v.Error.Param = &e.param
	}
	if e.code != "" {
		v.Error.Code = &e.code
	}
	b, _ := json.Marshal(v)
	return b
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_, _ = w.Write(e.body())
}

// parseGeneration decodes and validates a request body against profile p.
func parseGeneration(body []byte, api apiKind, p Profile) (generation, *apiError) {
	var req apiRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return generation{}, badRequest("", "invalid JSON body: %v", err)
	}
	return settleGeneration(req, api, p)
}

// settleGeneration validates a decoded request against profile p; the
// native APIs' requests are translated to an apiRequest and come here too,
// so every API is held to the same limits.
func settleGeneration(req apiRequest, api apiKind, p Profile) (generation, *apiError) {
	if req.Model != "" && req.Model != p.Model {
		return generation{}, &apiError{status: http.StatusNotFound, typ: "invalid_request_error", param: "model", code: "model_not_found",
			msg: fmt.Sprintf("The model `%s` does not exist.", req.Model)}
	}
	if req.N != nil && *req.N != 1 {
		return generation{}, badRequest("n", "n=%d is not supported by the simulator; use n=1", *req.N)
	}
	g := generation{api: api, stream: req.Stream, ignoreEOS: req.IgnoreEOS, minTokens: req.MinTokens, effort: req.ReasoningEffort}
	g.includeUsage = req.Stream && req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	if api == apiChat {
		if err := checkToolMessages(req.Messages, "tool_call_id"); err != nil {
			return generation{}, err
		}
	}
	g.toolCall = toolCallOf(&req, api)
	h := NewPromptHasher(p.BlockSize)
	if err := hashPrompt(h, &req, api); err != nil {
		return generation{}, err
	}
	g.promptTokens, g.hashes, g.hasher = max(h.Tokens(), 1), h.BlockHashes(), h
	if err := g.settleLimits(req, p.MaxModelLen); err != nil {
		return generation{}, err
	}
	return g, nil
}

// hashPrompt feeds the chat messages or the completion prompt to h.
func hashPrompt(h *PromptHasher, req *apiRequest, api apiKind) *apiError {
	if api == apiChat {
		if len(req.Messages) == 0 {
			return badRequest("messages", "messages must be a non-empty array")
		}
		for i, m := range req.Messages {
			if err := addContent(h, m.Content); err != nil {
				return badRequest(fmt.Sprintf("messages[%d].content", i), "%v", err)
			}
			for _, tc := range m.ToolCalls {
				h.AddText(tc.Function.Name)
				h.AddText(tc.Function.Arguments)
			}
		}
		return nil
	}
	if len(req.Prompt) == 0 {
		return badRequest("prompt", "prompt is required")
	}
	if err := addPrompt(h, req.Prompt); err != nil {
		return badRequest("prompt", "%v", err)
	}
	return nil
}

// addContent handles a chat message's content: a string, null, or an array
// of parts of which the "text" ones count and the "image_url" ones cost
// tokens by resolution (vision.go), as a Messages API image block does;
// a tool_use block counts its name and input, a tool_result its content.
func addContent(h *PromptHasher, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		h.AddText(s)
		return nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return fmt.Errorf("content must be a string or an array of parts")
	}
	for k, p := range parts {
		switch p.Type {
		case "text":
			h.AddText(p.Text)
		case "image_url":
			if err := addImage(h, p.ImageURL); err != nil {
				return fmt.Errorf("part %d: %w", k, err)
			}
		case "image": // a Messages API image block (messages_images.go)
			if err := addImageSource(h, p.Source); err != nil {
				return fmt.Errorf("part %d: %w", k, err)
			}
		case "tool_use": // the call's name and input, as tool_calls count
			h.AddText(p.Name)
			h.AddText(string(p.Input))
		case "tool_result":
			if err := addContent(h, p.Content); err != nil {
				return fmt.Errorf("part %d: %w", k, err)
			}
		}
	}
	return nil
}

// addPrompt handles a completion prompt: a string, a token-id array, or a
// one-element batch of either.
func addPrompt(h *PromptHasher, raw json.RawMessage) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		h.AddText(s)
		return nil
	}
	var ids []uint64
	if json.Unmarshal(raw, &ids) == nil {
		for _, id := range ids {
			h.AddToken(id)
		}
		return nil
	}
	var batch []json.RawMessage
	if json.Unmarshal(raw, &batch) == nil {
		if len(batch) != 1 {
			return fmt.Errorf("batched prompts (%d) are not supported by the simulator; send one prompt per request", len(batch))
		}
		return addPrompt(h, batch[0])
	}
	return fmt.Errorf("prompt must be a string, an array of token ids, or a one-element array of either")
}

// settleLimits resolves max_tokens and checks the context length, with the
// message OpenAI (and vLLM) send when a request does not fit.
func (g *generation) settleLimits(req apiRequest, maxModelLen int) *apiError {
	what := "messages"
	if g.api == apiCompletions {
		what = "prompt"
	}
	explicit := req.MaxTokens
	if req.MaxCompletionTokens != nil {
		explicit = req.MaxCompletionTokens
	}
	if explicit == nil {
		if g.promptTokens >= maxModelLen {
			return tooLong(what, fmt.Sprintf("This model's maximum context length is %d tokens. However, your %s resulted in %d tokens. Please reduce the length of the %s.",
				maxModelLen, what, g.promptTokens, what))
		}
		g.maxTokens = maxModelLen - g.promptTokens
	} else {
		g.maxTokens = *explicit
		if g.maxTokens < 1 {
			return badRequest("max_tokens", "max_tokens must be at least 1, got %d.", g.maxTokens)
		}
		if total := g.promptTokens + g.maxTokens; total > maxModelLen {
			return tooLong(what, fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the %s, %d in the completion). Please reduce the length of the %s or completion.",
				maxModelLen, total, g.promptTokens, what, g.maxTokens, what))
		}
	}
	if g.minTokens < 0 || g.minTokens > g.maxTokens {
		return badRequest("min_tokens", "min_tokens must be between 0 and max_tokens=%d, got %d.", g.maxTokens, g.minTokens)
	}
	return nil
}

func tooLong(param, msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", param: param, code: "context_length_exceeded", msg: msg}
}

// chunkRenderer renders one request's stream chunks into a reused buffer,
// from pieces built once, so a token costs a few appends and one write.
type chunkRenderer struct {
	api  apiKind
	head []byte // `data: {"id":…,"object":…,"created":…,"model":…,"choices":[`
	buf  []byte
}

func newChunkRenderer(api apiKind, id string, created int64, modelJSON []byte) *chunkRenderer {
	object := "chat.completion.chunk"
	if api == apiCompletions {
		object = "text_completion"
	}
	head := fmt.Appendf(nil, `data: {"id":%q,"object":%q,"created":%d,"model":%s,"choices":[`, id, object, created, modelJSON)
	return &chunkRenderer{api: api, head: head, buf: make([]byte, 0, 512)}
}

// token renders a chunk carrying one token's text; broken leaves the JSON
// unterminated, for the malformed-chunk fault.
func (c *chunkRenderer) token(text string, broken bool) []byte {
	b := append(c.buf[:0], c.head...)
	if c.api == apiChat {
		b = append(b, `{"index":0,"delta":{"content":"`...)
	} else {
		b = append(b, `{"index":0,"text":"`...)
	}
	b = append(b, text...)
	if !broken {
		if c.api == apiChat {
			b = append(b, `"},"logprobs":null,"finish_reason":null}]}`...)
		} else {
			b = append(b, `","logprobs":null,"finish_reason":null}]}`...)
		}
	}
	c.buf = append(b, "\n\n"...)
	return c.buf
}

// reasoningToken renders a chat chunk carrying one reasoning token, in
// delta.reasoning_content as vLLM's reasoning parsers send it.
func (c *chunkRenderer) reasoningToken(text string, broken bool) []byte {
	b := append(append(c.buf[:0], c.head...), `{"index":0,"delta":{"reasoning_content":"`...)
	b = append(b, text...)
	if !broken {
		b = append(b, `"},"logprobs":null,"finish_reason":null}]}`...)
	}
	c.buf = append(b, "\n\n"...)
	return c.buf
}

// role renders the chat stream's opening chunk, which carries no content.
func (c *chunkRenderer) role() []byte {
	b := append(c.buf[:0], c.head...)
	c.buf = append(b, `{"index":0,"delta":{"role":"assistant"},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
	return c.buf
}

// finish renders the chunk that carries finish_reason and no content.
func (c *chunkRenderer) finish(reason string) []byte {
	b := append(c.buf[:0], c.head...)
	if c.api == apiChat {
		b = append(b, `{"index":0,"delta":{},"logprobs":null,"finish_reason":"`...)
	} else {
		b = append(b, `{"index":0,"text":"","logprobs":null,"finish_reason":"`...)
	}
	c.buf = append(append(b, reason...), `"}]}`+"\n\n"...)
	return c.buf
}

// usage renders the final usage chunk (empty choices), as
// stream_options.include_usage asks.
func (c *chunkRenderer) usage(u usage, t seqTimes) []byte {
	b := append(c.buf[:0], c.head...)
	b = append(b, `],"usage":`...)
	b = u.appendJSON(b)
	if !u.hideCached { // the timings carry cache_n
		b = t.appendJSON(append(b, `,"timings":`...))
	}
	c.buf = append(b, "}\n\n"...)
	return c.buf
}

const doneEvent = "data: [DONE]\n\n"

// usage is OpenAI's usage block.
type usage struct {
	prompt, completion, cached int
	reasoning                  int  // of completion; written only when > 0
	hideCached                 bool // no prompt_tokens_details (Profile.HideCachedTokens)
}

func (u usage) appendJSON(b []byte) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(u.prompt), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(u.completion), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.prompt+u.completion), 10)
	if !u.hideCached {
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(u.cached), 10)
		b = append(b, '}')
	}
	if u.reasoning > 0 {
		b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(u.reasoning), 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// completionBody renders a non-streaming reply.
func completionBody(api apiKind, id string, created int64, modelJSON []byte, text, reason string, u usage) []byte {
	textJSON, _ := json.Marshal(text)
	var b []byte
	if api == apiChat {
		b = fmt.Appendf(b, `{"id":%q,"object":"chat.completion","created":%d,"model":%s,"choices":[{"index":0,"message":{"role":"assistant","content":%s},"logprobs":null,"finish_reason":%q}],"usage":`,
			id, created, modelJSON, textJSON, reason)
	} else {
		b = fmt.Appendf(b, `{"id":%q,"object":"text_completion","created":%d,"model":%s,"choices":[{"index":0,"text":%s,"logprobs":null,"finish_reason":%q}],"usage":`,
			id, created, modelJSON, textJSON, reason)
	}
	return append(u.appendJSON(b), '}')
}
