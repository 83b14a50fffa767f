package protocol

import (
	"net/http"
	"strings"

	"github.com/inferload/inferload/record"
)

// APIResponses is OpenAI's Responses API: POST {base}/responses (base
// .../v1), its stream typed SSE events that end with response.completed,
// response.incomplete or response.failed (no [DONE]).
const APIResponses API = "responses"

// ResponsesEvent is what one Responses API object says: a stream event
// ({"type", "delta", "response": {...}, "code", "message",
// "sequence_number", ...}) or, for a whole reply, the response object
// itself. Byte slices alias the scanned data.
type ResponsesEvent struct {
	// Type is the event's type, raw ("response.output_text.delta"); empty
	// for a whole reply.
	Type []byte
	// Delta is true for a non-empty "delta" string.
	Delta bool
	// Code and Message are an error event's top-level code and message.
	Code, Message []byte
	// Response is the event's response object when it has one, else what
	// the object's own members say of a response (a whole reply).
	Response ResponseFields

	top     ResponseFields // the object's own members
	hasResp bool           // a "response" object was read into Response
}

// ResponseFields is what a response object says.
type ResponseFields struct {
	// ID is the response's id: what a later turn sends as
	// previous_response_id.
	ID []byte
	// Status is "completed", "incomplete", "failed" or "in_progress".
	Status []byte
	// Usage is true when a usage object was present; the counts are its
	// input_tokens, output_tokens, output_tokens_details.reasoning_tokens
	// and input_tokens_details.cached_tokens.
	Usage                                  bool
	Input, Output, ReasoningTokens, Cached int
	// Incomplete is incomplete_details.reason ("max_output_tokens").
	Incomplete []byte
	// Error is true when the error member is an object; ErrorCode and
	// ErrorMessage are its code and message.
	Error                   bool
	ErrorCode, ErrorMessage []byte
	// Text and Reasoning say whether the output items held answer text
	// (output_text, refusal, a function call) or reasoning text.
	Text, Reasoning bool
}

// ScanResponses reads data, one JSON object, into e without allocating,
// with ScanChunk's guarantees. Where a member appears twice the last
// counts, as encoding/json reads it.
func ScanResponses(data []byte, e *ResponsesEvent) error {
	*e = ResponsesEvent{}
	s := scanner{b: data}
	if err := s.start(); err != nil {
		return err
	}
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		if err = s.responsesTop(k, e); err != nil {
			break
		}
	}
	if err != nil {
		return err
	}
	if !e.hasResp {
		e.Response = e.top
	}
	return s.end()
}

// responsesTop reads one member of an event or whole reply.
func (s *scanner) responsesTop(k []byte, e *ResponsesEvent) error {
	var err error
	switch string(k) {
	case "type":
		e.Type, err = s.stringOrSkip()
	case "delta":
		var text []byte
		text, err = s.stringOrSkip()
		e.Delta = len(text) > 0
	case "response":
		e.Response, e.hasResp = ResponseFields{}, s.peek() == '{'
		err = s.responseObject(&e.Response)
	case "code":
		e.Code, err = s.stringOrSkip()
	case "message":
		e.Message, err = s.stringOrSkip()
	default:
		err = s.responseMember(k, &e.top)
	}
	return err
}

// responseObject reads a response object into f (anything else is
// skipped).
func (s *scanner) responseObject(f *ResponseFields) error {
	if s.peek() != '{' {
		return s.skip()
	}
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		if err = s.responseMember(k, f); err != nil {
			break
		}
	}
	return err
}

// responseMember reads one member of a response object.
func (s *scanner) responseMember(k []byte, f *ResponseFields) error {
	var err error
	switch string(k) {
	case "id":
		f.ID, err = s.stringOrSkip()
	case "status":
		f.Status, err = s.stringOrSkip()
	case "usage":
		err = s.responsesUsage(f)
	case "incomplete_details":
		f.Incomplete, err = s.stringMember("reason")
	case "error":
		err = s.responsesError(f)
	case "output":
		err = s.responsesOutput(f)
	default:
		err = s.skip()
	}
	return err
}

// responsesUsage reads a usage object of the Responses or the Realtime
// API (whose cached tokens sit in input_token_details, where the
// Responses API says input_tokens_details); null leaves Usage false.
func (s *scanner) responsesUsage(f *ResponseFields) error {
	f.Usage, f.Input, f.Output, f.ReasoningTokens, f.Cached = false, 0, 0, 0, 0
	if s.peek() != '{' {
		return s.skip()
	}
	f.Usage = true
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "input_tokens":
			f.Input, err = s.count()
		case "output_tokens":
			f.Output, err = s.count()
		case "input_tokens_details", "input_token_details":
			f.Cached, err = s.member("cached_tokens")
		case "output_tokens_details":
			f.ReasoningTokens, err = s.member("reasoning_tokens")
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return err
}

// responsesError reads a response's error: an object with code and
// message is one, null is none.
func (s *scanner) responsesError(f *ResponseFields) error {
	f.Error, f.ErrorCode, f.ErrorMessage = false, nil, nil
	if s.peek() != '{' {
		return s.skip()
	}
	f.Error = true
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "code":
			f.ErrorCode, err = s.stringOrSkip()
		case "message":
			f.ErrorMessage, err = s.stringOrSkip()
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return err
}

// responsesOutput reads a whole reply's output items: a message whose
// content holds non-empty text (output_text, refusal) or a function call
// is answer text; a reasoning item with non-empty summary or content text
// is reasoning.
func (s *scanner) responsesOutput(f *ResponseFields) error {
	f.Text, f.Reasoning = false, false
	if s.peek() != '[' {
		return s.skip()
	}
	more, err := s.enter('[', ']')
	for ; more && err == nil; more, err = s.next(']') {
		var typ []byte
		var text bool
		if typ, text, err = s.outputItem(); err != nil {
			break
		}
		switch string(typ) {
		case "reasoning":
			f.Reasoning = f.Reasoning || text
		case "function_call":
			f.Text = true
		default:
			f.Text = f.Text || text
		}
	}
	return err
}

// outputItem reads one output item: its type and whether its content or
// summary parts carry non-empty text.
func (s *scanner) outputItem() (typ []byte, text bool, err error) {
	if s.peek() != '{' {
		return nil, false, s.skip()
	}
	var content, summary bool
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "type":
			typ, err = s.stringOrSkip()
		case "content":
			content, err = s.partsText()
		case "summary":
			summary, err = s.partsText()
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return typ, content || summary, err
}

// partsText reads an array of parts and reports whether one has a
// non-empty "text" or "refusal".
func (s *scanner) partsText() (bool, error) {
	if s.peek() != '[' {
		return false, s.skip()
	}
	text := false
	more, err := s.enter('[', ']')
	for ; more && err == nil; more, err = s.next(']') {
		var t bool
		if t, err = s.partText(); err != nil {
			break
		}
		text = text || t
	}
	return text, err
}

// partText reads one part and reports whether its "text" or "refusal" is
// a non-empty string.
func (s *scanner) partText() (bool, error) {
	if s.peek() != '{' {
		return false, s.skip()
	}
	var text, refusal []byte
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "text":
			text, err = s.stringOrSkip()
		case "refusal":
			refusal, err = s.stringOrSkip()
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return len(text) > 0 || len(refusal) > 0, err
}

// stringMember reads an object and returns its member name's string
// value (nil for null or another type).
func (s *scanner) stringMember(name string) ([]byte, error) {
	if s.peek() != '{' {
		return nil, s.skip()
	}
	var v []byte
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		if string(k) == name {
			v, err = s.stringOrSkip()
		} else {
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return v, err
}

// readResponsesStream reads a streamed Responses reply: typed events, the
// answer in response.output_text.delta (and refusal and function-call
// argument deltas), reasoning in response.reasoning_text.delta and
// response.reasoning_summary_text.delta; response.completed or
// response.incomplete end it, response.failed and error fail it.
func (cl *call) readResponsesStream(resp *http.Response) error {
	var e ResponsesEvent
	each := func(typ, data []byte, a arrival) (bool, error) {
		if err := ScanResponses(data, &e); err != nil {
			return false, cl.malformed(err)
		}
		if string(typ) == "error" {
			e.Type = typ // the SSE event says error whatever the data says
		}
		return cl.responsesEvent(&e, a)
	}
	return cl.readTypedStream(resp, each, func() error {
		return cl.endWithout("response.completed", "text/event-stream", resp)
	})
}

// responsesEvent folds one stream event into the trace and reports
// whether it ended the reply.
func (cl *call) responsesEvent(e *ResponsesEvent, a arrival) (bool, error) {
	if id := e.Response.ID; len(id) > 0 && cl.t.ResponseID == "" {
		cl.t.ResponseID = decodeJSONString(id)
	}
	switch string(e.Type) {
	case "response.output_text.delta", "response.refusal.delta", "response.function_call_arguments.delta":
		if e.Delta {
			return false, cl.token(a, false)
		}
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		if e.Delta {
			return false, cl.token(a, true)
		}
	case "response.completed", "response.incomplete":
		cl.responsesFinal(&e.Response)
		return true, nil
	case "response.failed", "error":
		return false, responsesFailure(e)
	}
	return false, nil
}

// responsesFinal takes a final response's usage and finish.
func (cl *call) responsesFinal(f *ResponseFields) {
	t := cl.t
	if f.Usage {
		t.UsageReported = true
		t.PromptTokens, t.CompletionTokens = f.Input, f.Output
		t.ReasoningTokens, t.CachedTokens = f.ReasoningTokens, f.Cached
	}
	switch {
	case string(f.Incomplete) == "max_output_tokens":
		t.FinishReason = "length"
	case string(f.Incomplete) == "content_filter":
		t.FinishReason = "content_filter"
	case string(f.Status) == "completed":
		t.FinishReason = "stop"
	}
}

// responsesFailure classifies a response.failed or error event by its
// code (the response's error object's, else the event's own):
// rate_limit_exceeded is a 429 by another name, invalid_* a rejected
// request, anything else the server's failure mid-reply.
func responsesFailure(e *ResponsesEvent) error {
	code, msg := e.Code, e.Message
	if e.Response.Error {
		code, msg = e.Response.ErrorCode, e.Response.ErrorMessage
	}
	c := decodeJSONString(code)
	kind := record.ErrStreamErrorEvent
	switch {
	case c == "rate_limit_exceeded":
		kind = record.ErrHTTP429
	case strings.HasPrefix(c, "invalid"):
		kind = record.ErrHTTP4xx
	}
	text := decodeJSONString(e.Type) + " event: " + decodeJSONString(msg)
	if c != "" {
		text += " (code " + c + ")"
	}
	return &failure{kind, text}
}

// applyResponsesBody checks a whole (stream: false) reply: the response
// object, its text in output items.
func (cl *call) applyResponsesBody(b []byte, a arrival) error {
	var e ResponsesEvent
	if err := ScanResponses(b, &e); err != nil {
		return &failure{record.ErrMalformedEvent, "reply body: " + err.Error()}
	}
	f := &e.Response
	if len(f.ID) > 0 {
		cl.t.ResponseID = decodeJSONString(f.ID)
	}
	if f.Error || string(f.Status) == "failed" {
		e.Type = []byte("response.failed")
		return responsesFailure(&e)
	}
	cl.responsesFinal(f)
	if f.Text || f.Reasoning {
		if err := cl.token(a, !f.Text); err != nil {
			return err
		}
	}
	return emptyOutput(cl.t)
}
