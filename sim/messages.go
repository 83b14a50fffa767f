package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// messagesRequest is the part of an Anthropic Messages API body the
// simulator honours.
type messagesRequest struct {
	Model     string          `json:"model"`
	Messages  []apiMessage    `json:"messages"`
	System    json.RawMessage `json:"system"`
	MaxTokens *int            `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	Tools     []messagesTool  `json:"tools"`
}

// parseMessages translates a POST /v1/messages body into a chat request:
// system (a string or text blocks) first, then the messages (image
// blocks, not image_url parts: messages_images.go), and the tools
// offered (messages_tools.go). Anthropic requires max_tokens.
func parseMessages(_ *http.Request, body []byte) (nativeRequest, *apiError) {
	var o messagesRequest
	if err := json.Unmarshal(body, &o); err != nil {
		return nativeRequest{}, badRequest("", "invalid character in request body: %v", err)
	}
	if o.MaxTokens == nil {
		return nativeRequest{}, badRequest("max_tokens", "max_tokens: Field required")
	}
	var msgs []apiMessage
	if len(o.System) > 0 && string(o.System) != "null" {
		msgs = append(msgs, apiMessage{Role: "system", Content: o.System})
	}
	msgs = append(msgs, o.Messages...)
	if aerr := checkToolResults(o.Messages); aerr != nil {
		return nativeRequest{}, aerr
	}
	if aerr := checkImageBlocks(o.Messages); aerr != nil {
		return nativeRequest{}, aerr
	}
	req := apiRequest{Model: o.Model, Messages: msgs, MaxTokens: o.MaxTokens, Stream: o.Stream, Tools: chatTools(o.Tools)}
	return nativeRequest{req: req, api: apiChat}, nil
}

// messagesDialect is the Messages API's replies: typed SSE events (a
// thinking block while the profile reasons, then a text block) or one
// message object, with Anthropic's usage (input_tokens without the
// cached part) and error shapes.
type messagesDialect struct {
	c   *call
	id  string
	buf []byte
}

func newMessagesDialect(c *call) dialect {
	return &messagesDialect{c: c, id: "msg_" + strings.TrimPrefix(c.id, "chatcmpl-"), buf: make([]byte, 0, 256)}
}

func (d *messagesDialect) contentType() string { return "text/event-stream" }
func (d *messagesDialect) holdsLast() bool     { return false }

// sseTyped appends one SSE event of type typ with data {"type": typ, rest}.
func sseTyped(b []byte, typ, rest string) []byte {
	b = append(append(append(b, "event: "...), typ...), "\ndata: {\"type\":\""...)
	return append(append(append(append(b, typ...), '"'), rest...), "}\n\n"...)
}

// blockStart appends a content_block_start of a thinking or text block.
func blockStart(b []byte, index int, thinking bool) []byte {
	block := `{"type":"text","text":""}`
	if thinking {
		block = `{"type":"thinking","thinking":"","signature":""}`
	}
	return sseTyped(b, "content_block_start", `,"index":`+strconv.Itoa(index)+`,"content_block":`+block)
}

// usage is Anthropic's usage object. message_start carries it before the
// last token, so the cached part is read from openCached, not cached
// (written only when the stream ends).
func (d *messagesDialect) usage(output int) string {
	c := d.c
	cached := int(c.st.openCached.Load())
	return fmt.Sprintf(`{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":%d,"output_tokens":%d}`,
		c.g.promptTokens-cached, cached, output)
}

func (d *messagesDialect) start() []byte {
	b := sseTyped(nil, "message_start", fmt.Sprintf(`,"message":{"id":"%s","type":"message","role":"assistant","content":[],"model":%s,"stop_reason":null,"stop_sequence":null,"usage":%s}`,
		d.id, d.c.s.modelJSON, d.usage(1)))
	if d.c.callsTool() {
		b = d.toolUseStart(b)
	} else {
		b = blockStart(b, 0, d.c.reasoning > 0)
	}
	return sseTyped(b, "ping", "")
}

// textIndex is the text block's index: 1 after a thinking block.
func (d *messagesDialect) textIndex() int {
	if d.c.reasoning > 0 {
		return 1
	}
	return 0
}

func (d *messagesDialect) token(i int, text string, broken bool) []byte {
	if d.c.callsTool() {
		return d.toolInputDelta()
	}
	b := d.buf[:0]
	thinking := i < d.c.reasoning
	index, kind, field := d.textIndex(), "text_delta", "text"
	if thinking {
		index, kind, field = 0, "thinking_delta", "thinking"
	} else if i == d.c.reasoning && i > 0 {
		b = sseTyped(b, "content_block_stop", `,"index":0`)
		b = blockStart(b, index, false)
	}
	b = append(b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":"...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(append(append(append(b, `,"delta":{"type":"`...), kind...), `","`...), field...)
	b = appendJSONText(append(b, `":`...), text)
	if broken {
		b = b[:len(b)-2]
	}
	d.buf = append(b, "}}\n\n"...)
	return d.buf
}

func (d *messagesDialect) errorEvent(msg string) []byte {
	return sseTyped(nil, "error", `,"error":{"type":"api_error","message":`+string(appendJSONText(nil, msg))+`}`)
}

// stopReason is Anthropic's name for the engine's finish.
func (d *messagesDialect) stopReason() string {
	switch d.c.st.reason {
	case "length":
		return "max_tokens"
	case "tool_calls":
		return "tool_use"
	}
	return "end_turn"
}

func (d *messagesDialect) end(sent int, _ string, marker bool) []byte {
	index := 0
	if sent > d.c.reasoning {
		index = d.textIndex()
	}
	b := sseTyped(nil, "content_block_stop", `,"index":`+strconv.Itoa(index))
	b = sseTyped(b, "message_delta", fmt.Sprintf(`,"delta":{"stop_reason":"%s","stop_sequence":null},"usage":{"output_tokens":%d}`, d.stopReason(), sent))
	if marker {
		b = sseTyped(b, "message_stop", "")
	}
	return b
}

func (d *messagesDialect) whole(h http.Header, text string, n int) []byte {
	h.Set("Content-Type", "application/json")
	c := d.c
	r := min(c.reasoning, n)
	thinking := c.fullText(r)
	var content []byte
	if c.callsTool() {
		content = d.toolUseBlock()
	} else if r > 0 {
		content = append(appendJSONText(append(content, `{"type":"thinking","signature":"","thinking":`...), thinking), "},"...)
	}
	if !c.callsTool() {
		content = append(appendJSONText(append(content, `{"type":"text","text":`...), text[len(thinking):]), '}')
	}
	return fmt.Appendf(nil, `{"id":"%s","type":"message","role":"assistant","model":%s,"content":[%s],"stop_reason":"%s","stop_sequence":null,"usage":%s}`,
		d.id, c.s.modelJSON, content, d.stopReason(), d.usage(n))
}

// errorBody is Anthropic's {"type": "error", "error": {"type", "message"}},
// its type named by the status.
func (d *messagesDialect) errorBody(e *apiError) []byte {
	typ := "api_error"
	switch {
	case e.status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case e.status == http.StatusServiceUnavailable || e.status == 529:
		typ = "overloaded_error"
	case e.status == http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case e.status >= 400 && e.status < 500:
		typ = "invalid_request_error"
	}
	return append(appendJSONText([]byte(`{"type":"error","error":{"type":"`+typ+`","message":`), e.msg), "}}"...)
}
