package protocol

import (
	"net/http"

	"github.com/inferload/inferload/internal/tritonpb"
	"github.com/inferload/inferload/record"
)

// TritonEvent is what one object of Triton's generate extension says: a
// /generate reply or one /generate_stream event ({"model_name",
// "model_version", "text_output", ...the model's other outputs}), or an
// error ({"error": "..."}). Byte slices alias the scanned data.
type TritonEvent struct {
	// Content is true for a non-empty text_output (a string, or a
	// non-empty array for a model whose output keeps its batch dimension).
	Content bool
	// Error is true for an error object; ErrorMessage is its message.
	Error        bool
	ErrorMessage []byte
}

// ScanTriton reads data, one JSON object, into e without allocating, with
// ScanChunk's guarantees.
func ScanTriton(data []byte, e *TritonEvent) error {
	*e = TritonEvent{}
	s := scanner{b: data}
	if err := s.start(); err != nil {
		return err
	}
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case tritonpb.TextOutput:
			e.Content, err = s.textOutput()
		case "error":
			e.Error, e.ErrorMessage, err = s.errorValue()
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	if err != nil {
		return err
	}
	return s.end()
}

// textOutput reads text_output: true for a non-empty string or array.
func (s *scanner) textOutput() (bool, error) {
	if s.peek() == '[' {
		return s.nonEmptyArray()
	}
	raw, err := s.stringOrSkip()
	return len(raw) > 0, err
}

// readTritonStream reads a /generate_stream reply: one SSE event per
// response of the model (one token each for the LLM backends). The
// extension has no end marker: the stream's clean end is the end, so a
// stream cut off cleanly cannot be told from a short answer.
func (cl *call) readTritonStream(resp *http.Response) error {
	var e TritonEvent
	each := func(data []byte, a arrival) (bool, error) {
		if err := ScanTriton(data, &e); err != nil {
			return false, cl.malformed(err)
		}
		return false, cl.triton(&e, a)
	}
	return cl.readEventStream(resp, each, func() error {
		cl.endRead()
		return emptyOutput(cl.t)
	})
}

// triton folds one generate-extension object into the trace.
func (cl *call) triton(e *TritonEvent, a arrival) error {
	if e.Error {
		return &failure{record.ErrStreamErrorEvent, "error event: " + decodeJSONString(e.ErrorMessage)}
	}
	if e.Content {
		return cl.token(a, false)
	}
	return nil
}

// applyTritonBody checks a whole /generate reply.
func (cl *call) applyTritonBody(b []byte, a arrival) error {
	var e TritonEvent
	if err := ScanTriton(b, &e); err != nil {
		return &failure{record.ErrMalformedEvent, "reply body: " + err.Error()}
	}
	if err := cl.triton(&e, a); err != nil {
		return err
	}
	return emptyOutput(cl.t)
}
