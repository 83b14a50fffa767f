package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// responsesRequest is the part of an OpenAI Responses API body the
// simulator honours.
type responsesRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       string          `json:"instructions"`
	MaxOutputTokens    *int            `json:"max_output_tokens"`
	Stream             bool            `json:"stream"`
	PreviousResponseID string          `json:"previous_response_id"`
	Reasoning          *struct {
		Effort string `json:"effort"`
	} `json:"reasoning"`
}

// parseResponses translates a POST /v1/responses body into a chat
// request: input is one string (a user message) or message items; with
// previous_response_id the held conversation (heldResponses) comes first,
// so its tokens count as input and its blocks hit the prefix cache as a
// server holding the history would.
func (s *Server) parseResponses(_ *http.Request, body []byte) (nativeRequest, *apiError) {
	var o responsesRequest
	if err := json.Unmarshal(body, &o); err != nil {
		return nativeRequest{}, badRequest("", "invalid character in request body: %v", err)
	}
	var msgs []apiMessage
	if o.PreviousResponseID != "" {
		held, ok := s.held.get(o.PreviousResponseID)
		if !ok {
			e := badRequest("previous_response_id", "Previous response with id '%s' not found.", o.PreviousResponseID)
			e.code = "previous_response_not_found"
			return nativeRequest{}, e
		}
		msgs = append(msgs, held...)
	}
	if o.Instructions != "" {
		msgs = append(msgs, apiMessage{Role: "system", Content: promptJSON(o.Instructions)})
	}
	var text string
	switch {
	case len(o.Input) == 0:
		return nativeRequest{}, badRequest("input", "input is required")
	case json.Unmarshal(o.Input, &text) == nil:
		msgs = append(msgs, apiMessage{Role: "user", Content: o.Input})
	default:
		var items []apiMessage
		if err := json.Unmarshal(o.Input, &items); err != nil {
			return nativeRequest{}, badRequest("input", "input must be a string or an array of message items")
		}
		msgs = append(msgs, items...)
	}
	req := apiRequest{Model: o.Model, Messages: msgs, MaxTokens: o.MaxOutputTokens, Stream: o.Stream}
	if o.Reasoning != nil {
		req.ReasoningEffort = o.Reasoning.Effort
	}
	return nativeRequest{req: req, api: apiChat, holds: true}, nil
}

// heldResponses is what the Responses API keeps of each answered
// response, so that a later request can name it as previous_response_id:
// the conversation up to and including its reply. It holds at most
// maxHeld, forgetting the oldest first.
type heldResponses struct {
	mu    sync.Mutex
	byID  map[string][]apiMessage
	order []string
}

const maxHeld = 1 << 14

func (h *heldResponses) put(id string, msgs []apiMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byID == nil {
		h.byID = make(map[string][]apiMessage)
	}
	if len(h.order) >= maxHeld {
		delete(h.byID, h.order[0])
		h.order = h.order[1:]
	}
	h.byID[id] = msgs
	h.order = append(h.order, id)
}

func (h *heldResponses) get(id string) ([]apiMessage, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, ok := h.byID[id]
	return m, ok
}

// responsesDialect is the Responses API's replies: typed SSE events
// (response.created, reasoning and text deltas, response.completed or
// response.incomplete with the usage) or one response object.
type responsesDialect struct {
	c   *call
	id  string
	seq int
	buf []byte
}

func newResponsesDialect(c *call) dialect {
	return &responsesDialect{c: c, id: "resp_" + strings.TrimPrefix(c.id, "chatcmpl-"), buf: make([]byte, 0, 256)}
}

func (d *responsesDialect) contentType() string { return "text/event-stream" }
func (d *responsesDialect) holdsLast() bool     { return false }

// event renders one SSE event of type typ whose data's members after
// "type" and "sequence_number" are rest (starting with a comma).
func (d *responsesDialect) event(b []byte, typ, rest string) []byte {
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":\""...)
	b = append(b, typ...)
	b = strconv.AppendInt(append(b, `","sequence_number":`...), int64(d.seq), 10)
	d.seq++
	b = append(b, rest...)
	return append(b, "}\n\n"...)
}

func (d *responsesDialect) start() []byte {
	return d.event(nil, "response.created", `,"response":{"id":"`+d.id+`","object":"response","status":"in_progress","output":[],"usage":null}`)
}

func (d *responsesDialect) token(i int, text string, broken bool) []byte {
	typ, item := "response.output_text.delta", "msg_"
	if i < d.c.reasoning {
		typ, item = "response.reasoning_text.delta", "rs_"
	}
	b := append(d.buf[:0], "event: "...)
	b = append(append(b, typ...), "\ndata: {\"type\":\""...)
	b = append(append(b, typ...), `","sequence_number":`...)
	b = strconv.AppendInt(b, int64(d.seq), 10)
	d.seq++
	b = append(append(append(b, `,"item_id":"`...), item...), d.id[5:]...)
	b = appendJSONText(append(b, `","output_index":0,"content_index":0,"delta":`...), text)
	if broken {
		b = b[:len(b)-2]
	}
	d.buf = append(b, "}\n\n"...)
	return d.buf
}

func (d *responsesDialect) errorEvent(msg string) []byte {
	return d.event(nil, "error", `,"code":"server_error","message":`+string(appendJSONText(nil, msg))+`,"param":null`)
}

// response renders the response object of a finished reply: its status
// and usage, and output items when out is not empty.
func (d *responsesDialect) response(n int, output string) []byte {
	c := d.c
	status, details := "completed", "null"
	if c.st.reason == "length" {
		status, details = "incomplete", `{"reason":"max_output_tokens"}`
	}
	b := fmt.Appendf(nil, `{"id":"%s","object":"response","created_at":%d,"status":"%s","error":null,"incomplete_details":%s,"model":%s,"output":[%s],`,
		d.id, c.created, status, details, c.s.modelJSON, output)
	return fmt.Appendf(b, `"usage":{"input_tokens":%d,"input_tokens_details":{"cached_tokens":%d},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":%d},"total_tokens":%d}}`,
		c.g.promptTokens, c.st.cached, n, min(c.reasoning, n), c.g.promptTokens+n)
}

func (d *responsesDialect) end(sent int, _ string, marker bool) []byte {
	if !marker {
		return nil
	}
	d.hold(sent)
	typ := "response.completed"
	if d.c.st.reason == "length" {
		typ = "response.incomplete"
	}
	return d.event(nil, typ, `,"response":`+string(d.response(sent, "")))
}

func (d *responsesDialect) whole(h http.Header, text string, n int) []byte {
	h.Set("Content-Type", "application/json")
	d.hold(n)
	r := min(d.c.reasoning, n)
	reasoning := d.c.fullText(r)
	var out []byte
	if r > 0 {
		out = appendJSONText(fmt.Appendf(out, `{"type":"reasoning","id":"rs_%s","summary":[],"content":[{"type":"reasoning_text","text":`, d.id[5:]), reasoning)
		out = append(out, "}]},"...)
	}
	out = fmt.Appendf(out, `{"type":"message","id":"msg_%s","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":`, d.id[5:])
	out = append(appendJSONText(out, text[len(reasoning):]), "}]}"...)
	return d.response(n, string(out))
}

// hold keeps the conversation and its reply of n tokens for a later
// previous_response_id.
func (d *responsesDialect) hold(n int) {
	c := d.c
	answer := c.fullText(n)[len(c.fullText(min(c.reasoning, n))):]
	msgs := append(c.g.held[:len(c.g.held):len(c.g.held)], apiMessage{Role: "assistant", Content: promptJSON(answer)})
	c.s.held.put(d.id, msgs)
}

func (d *responsesDialect) errorBody(e *apiError) []byte { return e.body() }
