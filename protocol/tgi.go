package protocol

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/inferload/inferload/record"
)

// TGIEvent is what one Text Generation Inference object says: a
// /generate_stream event ({"index", "token": {"id", "text", "logprob",
// "special"}, "generated_text", "details"}), a whole /generate reply
// ({"generated_text", "details"}) or an error ({"error", "error_type"}).
// Byte slices alias the scanned data.
type TGIEvent struct {
	// Token is true when the object carries a generated token that is not
	// special: the end-of-sequence token TGI sends last (special: true)
	// is not output.
	Token bool
	// Final is true when generated_text is a string: the stream's last
	// event, or a whole reply.
	Final bool
	// Text is true when generated_text is a non-empty string.
	Text bool
	// Details is true when a details object was present (the request
	// asked for parameters.details); the fields below come from it.
	Details bool
	// FinishReason is details.finish_reason ("length", "eos_token",
	// "stop_sequence").
	FinishReason []byte
	// GeneratedTokens is details.generated_tokens.
	GeneratedTokens int
	// InputLength is details.input_length (streams, TGI 2.x), 0 without.
	InputLength int
	// Error is true for an error object; ErrorMessage is its "error"
	// string and ErrorType its "error_type" ("generation", "overloaded",
	// "validation", "incomplete_generation").
	Error        bool
	ErrorMessage []byte
	ErrorType    []byte
}

// ScanTGI reads data, one JSON object, into e without allocating, with
// ScanChunk's guarantees (well-formedness checked, linear time, no panic).
func ScanTGI(data []byte, e *TGIEvent) error {
	*e = TGIEvent{}
	s := scanner{b: data}
	if err := s.start(); err != nil {
		return err
	}
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		if err = s.tgiMember(k, e); err != nil {
			break
		}
	}
	if err != nil {
		return err
	}
	return s.end()
}

func (s *scanner) tgiMember(k []byte, e *TGIEvent) error {
	var err error
	switch string(k) {
	case "token":
		e.Token, err = s.tgiToken()
	case "generated_text":
		var text []byte
		text, err = s.stringOrSkip()
		e.Final, e.Text = text != nil, len(text) > 0
	case "details":
		err = s.tgiDetails(e)
	case "error":
		e.Error, e.ErrorMessage, err = s.errorValue()
	case "error_type":
		e.ErrorType, err = s.stringOrSkip()
	default:
		err = s.skip()
	}
	return err
}

// tgiDetails reads a details object; a later one replaces an earlier one.
func (s *scanner) tgiDetails(e *TGIEvent) error {
	e.Details, e.FinishReason, e.GeneratedTokens, e.InputLength = false, nil, 0, 0
	if s.peek() != '{' {
		return s.skip()
	}
	e.Details = true
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "finish_reason":
			e.FinishReason, err = s.stringOrSkip()
		case "generated_tokens":
			e.GeneratedTokens, err = s.count()
		case "input_length":
			e.InputLength, err = s.count()
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return err
}

// tgiToken reads a token object: true unless it is special.
func (s *scanner) tgiToken() (bool, error) {
	if s.peek() != '{' {
		return false, s.skip()
	}
	special := false
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		if string(k) == "special" {
			special, err = s.boolean()
		} else {
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return !special, err
}

// readTGIStream reads a /generate_stream reply: SSE events of one token
// each, the last with generated_text (and details when asked for). TGI
// sends no [DONE]: the final event ends the stream.
func (cl *call) readTGIStream(resp *http.Response) error {
	var e TGIEvent
	each := func(data []byte, a arrival) (bool, error) {
		if err := ScanTGI(data, &e); err != nil {
			return false, cl.malformed(err)
		}
		if err := cl.tgi(&e, a); err != nil {
			return false, err
		}
		return e.Final, nil
	}
	return cl.readEventStream(resp, each, func() error {
		return cl.endWithout("the final event (generated_text)", "text/event-stream", resp)
	})
}

// readEventStream reads a native API's SSE reply: each data event (other
// event types and keep-alives skipped, an error event failing the stream)
// goes to each with its arrival, which says whether it ended the reply; a
// clean end of the body before that is atEOF's to judge.
func (cl *call) readEventStream(resp *http.Response, each func(data []byte, a arrival) (bool, error), atEOF func() error) error {
	return cl.readSSE(resp, func(ev Event) (bool, error) {
		if skip, err := otherEvent(ev); skip || err != nil {
			return false, err
		}
		return each(ev.Data, arrival{ev.At, ev.ReadLag, ev.Kernel})
	}, atEOF)
}

// readTypedStream reads an SSE reply whose events say their type in their
// data as well as in "event:" (the Responses and Messages APIs): every
// event with data goes to each with its SSE type, keep-alives are
// skipped.
func (cl *call) readTypedStream(resp *http.Response, each func(typ, data []byte, a arrival) (bool, error), atEOF func() error) error {
	return cl.readSSE(resp, func(ev Event) (bool, error) {
		if isBlank(ev.Data) {
			return false, nil
		}
		return each(ev.Type, ev.Data, arrival{ev.At, ev.ReadLag, ev.Kernel})
	}, atEOF)
}

// readSSE reads an SSE reply, each event to each, which says whether it
// ended the reply; a clean end of the body before that is atEOF's to
// judge.
func (cl *call) readSSE(resp *http.Response, each func(ev Event) (bool, error), atEOF func() error) error {
	sse := cl.c.readers.Get().(*SSEReader)
	sse.resetStamped(resp.Body, cl.rx())
	defer cl.c.putReader(sse)
	defer func() { cl.t.BytesIn = sse.BytesRead() }()
	for {
		ev, err := sse.Next()
		switch {
		case err == io.EOF:
			return atEOF()
		case errors.Is(err, ErrEventTooLarge):
			return cl.tooLarge(err)
		case err != nil:
			return err
		}
		end, err := each(ev)
		if err != nil {
			return err
		}
		if end {
			cl.t.SawDone = true
			cl.clock.end(cl.t, arrival{ev.At, ev.ReadLag, ev.Kernel})
			drain[Event](cl, sse)
			return emptyOutput(cl.t)
		}
	}
}

// tgi folds one TGI object into the trace.
func (cl *call) tgi(e *TGIEvent, a arrival) error {
	if e.Error {
		return tgiError(e)
	}
	if e.Details {
		cl.t.UsageReported = true
		cl.t.CompletionTokens = e.GeneratedTokens
		if e.InputLength > 0 { // streams only; /generate has x-prompt-tokens
			cl.t.PromptTokens = e.InputLength
		}
		if len(e.FinishReason) > 0 {
			cl.t.FinishReason = finishReason(e.FinishReason)
		}
	}
	if e.Token {
		return cl.token(a, false)
	}
	return nil
}

// tgiError classifies an error TGI sent inside a 200 reply: "overloaded"
// is a 429 by another name, "validation" a rejected request (TGI answers
// both with those statuses when it can still choose one).
func tgiError(e *TGIEvent) error {
	kind := record.ErrStreamErrorEvent
	switch string(e.ErrorType) {
	case "overloaded":
		kind = record.ErrHTTP429
	case "validation":
		kind = record.ErrHTTP4xx
	}
	msg := "error event: " + decodeJSONString(e.ErrorMessage)
	if len(e.ErrorType) > 0 {
		msg += " (error_type " + decodeJSONString(e.ErrorType) + ")"
	}
	return &failure{kind, msg}
}

// applyTGIBody checks a whole /generate reply; its usage comes from
// details or, without them, from the x-prompt-tokens and
// x-generated-tokens headers, and its server timings from TGI's
// x-queue-time and x-inference-time headers (tgiTimings).
func (cl *call) applyTGIBody(b []byte, a arrival) error {
	var e TGIEvent
	if err := ScanTGI(b, &e); err != nil {
		return &failure{record.ErrMalformedEvent, "reply body: " + err.Error()}
	}
	if e.Error {
		return tgiError(&e)
	}
	if !e.Final {
		return &failure{record.ErrMalformedEvent, "reply body has no generated_text"}
	}
	cl.tgiHeaders()
	_ = cl.tgi(&e, a)
	if e.Text || e.GeneratedTokens > 0 {
		_ = cl.token(a, false) // one event never overruns
	}
	return emptyOutput(cl.t)
}

// tgiHeaders reads the usage and timings TGI puts in a /generate reply's
// headers (a stream's headers are sent before any of it is known).
func (cl *call) tgiHeaders() {
	h := cl.hdr
	prompt, okP := headerInt(h, "X-Prompt-Tokens")
	gen, okG := headerInt(h, "X-Generated-Tokens")
	if okP && okG {
		cl.t.UsageReported = true
		cl.t.PromptTokens, cl.t.CompletionTokens = int(prompt), int(gen)
	}
	cl.t.Timings = tgiTimings(h)
}

// tgiTimings maps TGI's timing headers (whole milliseconds) onto the
// server timings: x-queue-time is the queue; x-inference-time, from the
// batch taking the request to its last token, is prefill and decode
// together (InferenceUS): TGI does not split them, and x-time-per-token
// is that sum divided by the tokens, not the decode alone.
func tgiTimings(h http.Header) ServerTimings {
	queue, okQ := headerInt(h, "X-Queue-Time")
	inf, okI := headerInt(h, "X-Inference-Time")
	if !okQ || !okI {
		return ServerTimings{}
	}
	t := ServerTimings{Present: true, QueueUS: queue * 1000, HasQueue: true, InferenceUS: inf * 1000}
	if n, ok := headerInt(h, "X-Prompt-Tokens"); ok {
		t.PromptN = int(n)
	}
	if n, ok := headerInt(h, "X-Generated-Tokens"); ok {
		t.PredictedN = int(n)
	}
	return t
}

// headerInt reads a header holding a non-negative integer.
func headerInt(h http.Header, name string) (int64, bool) {
	v := h.Get(name)
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && n >= 0
}
