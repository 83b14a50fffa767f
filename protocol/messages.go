package protocol

import (
	"net/http"

	"github.com/inferload/inferload/record"
)

// APIMessages is Anthropic's Messages API: POST {base}/messages (base
// .../v1), sent with x-api-key and anthropic-version; its stream is typed
// SSE events that end with message_stop.
const APIMessages API = "messages"

// AnthropicVersion is the anthropic-version header every Messages request
// carries (target.headers may override it).
const AnthropicVersion = "2023-06-01"

// MessagesEvent is what one Messages API object says: a stream event
// ({"type", "message": {...}, "index", "content_block": {...}, "delta":
// {...}, "usage": {...}, "error": {...}}) or, for a whole reply, the
// message object itself. Byte slices alias the scanned data.
type MessagesEvent struct {
	// Type is the event's type, raw ("content_block_delta"); "message"
	// for a whole reply, "error" for an error.
	Type []byte
	// Text, Thinking and ToolInput say whether a delta (or a
	// content_block_start's block) carries non-empty text, thinking or
	// tool input JSON (partial_json).
	Text, Thinking, ToolInput bool
	// TextRaw is that text, raw JSON string contents (escapes not
	// decoded), what Request.KeepText keeps of the answer.
	TextRaw []byte
	// ToolUse is true when a content_block_start's block is a tool_use:
	// the reply calls a tool, its input following in input_json_delta
	// deltas.
	ToolUse bool
	// DeltaStop is a message_delta's delta.stop_reason.
	DeltaStop []byte
	// ErrorType and ErrorMessage are an error object's type
	// ("overloaded_error") and message; Error is true when there is one.
	Error                   bool
	ErrorType, ErrorMessage []byte
	// Message is the event's message object when it has one
	// (message_start), else what the object's own members say of a
	// message (a whole reply, message_delta's usage).
	Message MessageFields

	top    MessageFields
	hasMsg bool
}

// MessageFields is what a message object says.
type MessageFields struct {
	// StopReason is "end_turn", "max_tokens", "stop_sequence", "tool_use"
	// or null.
	StopReason []byte
	// Usage is true when a usage object was present; HasInput when it had
	// input_tokens. Anthropic's input_tokens leaves out the cached part:
	// cache_read_input_tokens and cache_creation_input_tokens.
	Usage, HasInput                       bool
	Input, Output, CacheRead, CacheCreate int
	// Answer and Thinking say whether the content blocks held non-empty
	// text (or a tool_use) and thinking; ToolUse whether one was a
	// tool_use.
	Answer, Thinking, ToolUse bool
}

// ScanMessages reads data, one JSON object, into e without allocating,
// with ScanChunk's guarantees. Where a member appears twice the last
// counts, as encoding/json reads it.
func ScanMessages(data []byte, e *MessagesEvent) error {
	*e = MessagesEvent{}
	s := scanner{b: data}
	if err := s.start(); err != nil {
		return err
	}
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		if err = s.messagesTop(k, e); err != nil {
			break
		}
	}
	if err != nil {
		return err
	}
	if !e.hasMsg {
		e.Message = e.top
	}
	return s.end()
}

func (s *scanner) messagesTop(k []byte, e *MessagesEvent) error {
	var err error
	switch string(k) {
	case "type":
		e.Type, err = s.stringOrSkip()
	case "message":
		e.Message, e.hasMsg = MessageFields{}, s.peek() == '{'
		err = s.messageObject(&e.Message)
	case "delta":
		e.Text, e.Thinking, e.ToolInput, e.DeltaStop, e.TextRaw, e.ToolUse = false, false, false, nil, nil, false
		err = s.messagesDelta(e)
	case "content_block":
		var b block
		b, err = s.contentBlock()
		e.Text, e.Thinking, e.ToolInput, e.TextRaw, e.ToolUse = b.text, b.thinking, false, b.raw, b.toolUse
	case "error":
		err = s.messagesError(e)
	default:
		err = s.messageMember(k, &e.top)
	}
	return err
}

// messageObject reads a message object into f (anything else is skipped).
func (s *scanner) messageObject(f *MessageFields) error {
	if s.peek() != '{' {
		return s.skip()
	}
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		if err = s.messageMember(k, f); err != nil {
			break
		}
	}
	return err
}

func (s *scanner) messageMember(k []byte, f *MessageFields) error {
	var err error
	switch string(k) {
	case "stop_reason":
		f.StopReason, err = s.stringOrSkip()
	case "usage":
		err = s.messagesUsage(f)
	case "content":
		err = s.contentBlocks(f)
	default:
		err = s.skip()
	}
	return err
}

func (s *scanner) messagesUsage(f *MessageFields) error {
	f.Usage, f.HasInput, f.Input, f.Output, f.CacheRead, f.CacheCreate = false, false, 0, 0, 0, 0
	if s.peek() != '{' {
		return s.skip()
	}
	f.Usage = true
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "input_tokens":
			f.Input, err = s.count()
			f.HasInput = true
		case "output_tokens":
			f.Output, err = s.count()
		case "cache_read_input_tokens":
			f.CacheRead, err = s.count()
		case "cache_creation_input_tokens":
			f.CacheCreate, err = s.count()
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return err
}

// messagesDelta reads a delta: a content_block_delta's (text_delta,
// thinking_delta, input_json_delta) or a message_delta's stop_reason.
func (s *scanner) messagesDelta(e *MessagesEvent) error {
	if s.peek() != '{' {
		return s.skip()
	}
	var text, thinking, partial []byte
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "text":
			text, err = s.stringOrSkip()
		case "thinking":
			thinking, err = s.stringOrSkip()
		case "partial_json":
			partial, err = s.stringOrSkip()
		case "stop_reason":
			e.DeltaStop, err = s.stringOrSkip()
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	e.Text, e.Thinking, e.ToolInput, e.TextRaw = len(text) > 0, len(thinking) > 0, len(partial) > 0, text
	return err
}

// messagesError reads an error object {type, message}; null is none.
func (s *scanner) messagesError(e *MessagesEvent) error {
	e.Error, e.ErrorType, e.ErrorMessage = false, nil, nil
	if s.peek() != '{' {
		return s.skip()
	}
	e.Error = true
	return s.errorObject(&e.ErrorType, nil, &e.ErrorMessage)
}

// block is what one content block holds: non-empty text (or a tool_use,
// which is answer output) and non-empty thinking; raw is its text, and
// toolUse says it is a tool_use.
type block struct {
	text, thinking, toolUse bool
	raw                     []byte
}

func (s *scanner) contentBlock() (block, error) {
	if s.peek() != '{' {
		return block{}, s.skip()
	}
	var typ, text, thinking []byte
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "type":
			typ, err = s.stringOrSkip()
		case "text":
			text, err = s.stringOrSkip()
		case "thinking":
			thinking, err = s.stringOrSkip()
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	toolUse := string(typ) == "tool_use"
	return block{text: len(text) > 0 || toolUse, thinking: len(thinking) > 0, toolUse: toolUse, raw: text}, err
}

// contentBlocks reads a message's content array into f.
func (s *scanner) contentBlocks(f *MessageFields) error {
	f.Answer, f.Thinking, f.ToolUse = false, false, false
	if s.peek() != '[' {
		return s.skip()
	}
	more, err := s.enter('[', ']')
	for ; more && err == nil; more, err = s.next(']') {
		var b block
		if b, err = s.contentBlock(); err != nil {
			break
		}
		f.Answer, f.Thinking, f.ToolUse = f.Answer || b.text, f.Thinking || b.thinking, f.ToolUse || b.toolUse
	}
	return err
}

// readMessagesStream reads a streamed Messages reply: text_delta (and
// input_json_delta) deltas are content events, thinking_delta ones
// reasoning; message_start holds the input usage, message_delta the
// output count and stop_reason, message_stop ends it, an error event
// fails it. Request.KeepText keeps the answer and its tool calls
// (messages_reply.go).
func (cl *call) readMessagesStream(resp *http.Response) error {
	var e MessagesEvent
	each := func(typ, data []byte, a arrival) (bool, error) {
		if err := ScanMessages(data, &e); err != nil {
			return false, cl.malformed(err)
		}
		if string(typ) == "error" {
			e.Type = typ // the SSE event says error whatever the data says
		}
		if cl.req.KeepText > 0 {
			cl.t.keepMessages(&e, data, cl.req.KeepText)
		}
		return cl.messagesEvent(&e, a)
	}
	return cl.readTypedStream(resp, each, func() error {
		return cl.endWithout("message_stop", "text/event-stream", resp)
	})
}

// messagesEvent folds one stream event into the trace and reports whether
// it ended the reply.
func (cl *call) messagesEvent(e *MessagesEvent, a arrival) (bool, error) {
	t := cl.t
	switch string(e.Type) {
	case "content_block_delta", "content_block_start":
		if e.Text || e.ToolInput || e.Thinking {
			return false, cl.token(a, !e.Text && !e.ToolInput)
		}
	case "message_start", "message_delta":
		cl.messagesUsage(&e.Message)
		if len(e.DeltaStop) > 0 {
			t.FinishReason = stopReason(e.DeltaStop)
		}
	case "message_stop":
		return true, nil
	case "error":
		return false, messagesFailure(e)
	}
	return false, nil
}

// messagesUsage takes a usage object: message_start's input counts (the
// prompt is input_tokens plus the cached and cache-writing parts, as
// OpenAI's prompt_tokens counts them), message_delta's cumulative output.
func (cl *call) messagesUsage(f *MessageFields) {
	if !f.Usage {
		return
	}
	t := cl.t
	t.UsageReported = true
	if f.HasInput {
		t.PromptTokens = f.Input + f.CacheRead + f.CacheCreate
		t.CachedTokens = f.CacheRead
	}
	t.CompletionTokens = f.Output
}

// stopReason maps Anthropic's stop_reason onto the finish reasons the
// other APIs use.
func stopReason(b []byte) string {
	switch string(b) {
	case "end_turn", "stop_sequence":
		return "stop"
	case "max_tokens":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "refusal":
		return "content_filter"
	}
	return decodeJSONString(b)
}

// messagesFailure classifies an error event by its error.type:
// overloaded_error is the 529 Anthropic answers an overloaded service with
// (a 5xx, as a 503), rate_limit_error a 429, the request's own errors
// (invalid_request_error, request_too_large, authentication_error,
// permission_error, not_found_error) a 4xx; anything else (api_error) is
// the server failing mid-reply.
func messagesFailure(e *MessagesEvent) error {
	kind := record.ErrStreamErrorEvent
	switch string(e.ErrorType) {
	case "overloaded_error":
		kind = record.ErrHTTP5xx
	case "rate_limit_error":
		kind = record.ErrHTTP429
	case "invalid_request_error", "request_too_large", "authentication_error", "permission_error", "not_found_error":
		kind = record.ErrHTTP4xx
	}
	msg := "error event: " + decodeJSONString(e.ErrorMessage)
	if len(e.ErrorType) > 0 {
		msg += " (" + decodeJSONString(e.ErrorType) + ")"
	}
	return &failure{kind, msg}
}

// applyMessagesBody checks a whole (stream: false) reply: the message
// object, its content blocks and usage.
func (cl *call) applyMessagesBody(b []byte, a arrival) error {
	var e MessagesEvent
	if err := ScanMessages(b, &e); err != nil {
		return &failure{record.ErrMalformedEvent, "reply body: " + err.Error()}
	}
	if e.Error || string(e.Type) == "error" {
		return messagesFailure(&e)
	}
	f := &e.Message
	cl.messagesUsage(f)
	if len(f.StopReason) > 0 {
		cl.t.FinishReason = stopReason(f.StopReason)
	}
	if cl.req.KeepText > 0 {
		cl.t.keepMessagesBody(f, b, cl.req.KeepText)
	}
	if f.Answer || f.Thinking {
		if err := cl.token(a, !f.Answer); err != nil {
			return err
		}
	}
	return emptyOutput(cl.t)
}
