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
	// ResponseID is the response's id (response.id in an event, id in a
	// whole reply): what a later turn sends as previous_response_id.
	ResponseID []byte
	// Status is the response's status ("completed", "incomplete",
	// "failed").
	Status []byte
	// Usage is true when a usage object was present; the counts are its
	// input_tokens, output_tokens, output_tokens_details.reasoning_tokens
	// and input_tokens_details.cached_tokens.
	Usage                                  bool
	Input, Output, ReasoningTokens, Cached int
	// Incomplete is incomplete_details.reason ("max_output_tokens").
	Incomplete []byte
	// Error is true for an error event or a response carrying an error
	// object; ErrorCode and ErrorMessage are its code and message.
	Error                   bool
	ErrorCode, ErrorMessage []byte
	// Text and Reasoning say whether a whole reply's output held answer
	// text (output_text, refusal, a function call) or reasoning text.
	Text, Reasoning bool
}

// ScanResponses reads data, one JSON object, into e without allocating,
// with ScanChunk's guarantees.
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
	return s.end()
}

// responsesTop reads one member of an event, which for a whole reply is
// the response object's own.
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
		if s.peek() != '{' {
			return s.skip()
		}
		k, err := s.nextMember(false)
		for ; k != nil && err == nil; k, err = s.nextMember(true) {
			if err = s.responseMember(k, e); err != nil {
				break
			}
		}
		return err
	case "code":
		e.ErrorCode, err = s.stringOrSkip()
	case "message":
		e.ErrorMessage, err = s.stringOrSkip()
	default:
		err = s.responseMember(k, e)
	}
	return err
}

// responseMember reads one member of a response object.
func (s *scanner) responseMember(k []byte, e *ResponsesEvent) error {
	var err error
	switch string(k) {
	case "id":
		e.ResponseID, err = s.stringOrSkip()
	case "status":
		e.Status, err = s.stringOrSkip()
	case "usage":
		err = s.responsesUsage(e)
	case "incomplete_details":
		e.Incomplete, err = s.stringMember("reason")
	case "error":
		err = s.responsesError(e)
	case "output":
		err = s.responsesOutput(e)
	default:
		err = s.skip()
	}
	return err
}

// responsesUsage reads a usage object; null leaves Usage false.
func (s *scanner) responsesUsage(e *ResponsesEvent) error {
	if s.peek() != '{' {
		return s.skip()
	}
	e.Usage = true
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "input_tokens":
			e.Input, err = s.count()
		case "output_tokens":
			e.Output, err = s.count()
		case "input_tokens_details":
			e.Cached, err = s.member("cached_tokens")
		case "output_tokens_details":
			e.ReasoningTokens, err = s.member("reasoning_tokens")
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
func (s *scanner) responsesError(e *ResponsesEvent) error {
	if s.peek() != '{' {
		return s.skip()
	}
	e.Error = true
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "code":
			e.ErrorCode, err = s.stringOrSkip()
		case "message":
			e.ErrorMessage, err = s.stringOrSkip()
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
func (s *scanner) responsesOutput(e *ResponsesEvent) error {
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
			e.Reasoning = e.Reasoning || text
		case "function_call":
			e.Text = true
		default:
			e.Text = e.Text || text
		}
	}
	return err
}

// outputItem reads one output item: its type and whether any of its parts
// (content, summary) carries non-empty text (or refusal).
func (s *scanner) outputItem() (typ []byte, text bool, err error) {
	if s.peek() != '{' {
		return nil, false, s.skip()
	}
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "type":
			typ, err = s.stringOrSkip()
		case "content", "summary":
			var t bool
			t, err = s.partsText()
			text = text || t
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return typ, text, err
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
	text := false
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		if string(k) == "text" || string(k) == "refusal" {
			var raw []byte
			raw, err = s.stringOrSkip()
			text = text || len(raw) > 0
		} else {
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return text, err
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
		if string(typ) == "error" && string(e.Type) != "error" {
			e.Type, e.Error = typ, true // the SSE event says error whatever the data says
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
	if len(e.ResponseID) > 0 && cl.t.ResponseID == "" {
		cl.t.ResponseID = string(e.ResponseID)
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
		cl.responsesUsage(e)
		return true, nil
	case "response.failed", "error":
		return false, responsesFailure(e)
	}
	return false, nil
}

// responsesUsage takes a final response's usage and finish.
func (cl *call) responsesUsage(e *ResponsesEvent) {
	if e.Usage {
		t := cl.t
		t.UsageReported = true
		t.PromptTokens, t.CompletionTokens = e.Input, e.Output
		t.ReasoningTokens, t.CachedTokens = e.ReasoningTokens, e.Cached
	}
	switch {
	case string(e.Incomplete) == "max_output_tokens":
		cl.t.FinishReason = "length"
	case string(e.Incomplete) == "content_filter":
		cl.t.FinishReason = "content_filter"
	case string(e.Status) == "completed":
		cl.t.FinishReason = "stop"
	}
}

// responsesFailure classifies a response.failed or error event by its
// code: rate_limit_exceeded is a 429 by another name, invalid_* a
// rejected request, anything else the server's failure mid-reply.
func responsesFailure(e *ResponsesEvent) error {
	code := decodeJSONString(e.ErrorCode)
	kind := record.ErrStreamErrorEvent
	switch {
	case code == "rate_limit_exceeded":
		kind = record.ErrHTTP429
	case strings.HasPrefix(code, "invalid"):
		kind = record.ErrHTTP4xx
	}
	msg := string(e.Type) + " event: " + decodeJSONString(e.ErrorMessage)
	if code != "" {
		msg += " (code " + code + ")"
	}
	return &failure{kind, msg}
}

// applyResponsesBody checks a whole (stream: false) reply: the response
// object, its text in output items.
func (cl *call) applyResponsesBody(b []byte, a arrival) error {
	var e ResponsesEvent
	if err := ScanResponses(b, &e); err != nil {
		return &failure{record.ErrMalformedEvent, "reply body: " + err.Error()}
	}
	if len(e.ResponseID) > 0 {
		cl.t.ResponseID = string(e.ResponseID)
	}
	if e.Error || string(e.Status) == "failed" {
		e.Type = []byte("response.failed")
		return responsesFailure(&e)
	}
	cl.responsesUsage(&e)
	if e.Text || e.Reasoning {
		if err := cl.token(a, !e.Text); err != nil {
			return err
		}
	}
	return emptyOutput(cl.t)
}
