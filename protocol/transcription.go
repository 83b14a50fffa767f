package protocol

import (
	"bytes"
	"net/http"

	"github.com/inferload/inferload/record"
)

// APITranscriptions is OpenAI's speech-to-text API, POST
// {base}/audio/transcriptions (base .../v1): a multipart upload of the
// audio, answered with {"text", "usage"} or, streaming, with typed SSE
// events (transcript.text.delta, then transcript.text.done) as OpenAI
// sends them, or with chat-completion-style chunks ending in [DONE] as
// vLLM sends them. Both stream forms are read.
const APITranscriptions API = "transcriptions"

// TranscriptionEvent is what one object of a transcription reply says:
// an OpenAI stream event ({"type", "delta", "text", "usage"}) or a whole
// reply ({"text", "usage"}). Byte slices alias the scanned data.
type TranscriptionEvent struct {
	// Type is the event's type, raw ("transcript.text.delta"); empty for
	// a whole reply and for vLLM's chunks, which carry "choices".
	Type []byte
	// Delta is true for a non-empty "delta" string, Text for a non-empty
	// "text" (the done event's and a whole reply's transcript).
	Delta, Text bool
	// Choices is true when the object has a "choices" member: a vLLM
	// chunk, read as a chat chunk.
	Choices bool
	// Usage is true when a usage object in tokens was present
	// ({"type": "tokens", "input_tokens", "output_tokens"}); a usage in
	// seconds of audio ({"type": "duration"}) carries no token counts.
	Usage         bool
	Input, Output int
	// Error is true when the object has an error member (an object or a
	// string); ErrorMessage is its message.
	Error        bool
	ErrorMessage []byte
}

// ScanTranscription reads data, one JSON object, into e without
// allocating, with ScanChunk's guarantees.
func ScanTranscription(data []byte, e *TranscriptionEvent) error {
	*e = TranscriptionEvent{}
	s := scanner{b: data}
	if err := s.start(); err != nil {
		return err
	}
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		if err = s.transcriptionMember(k, e); err != nil {
			break
		}
	}
	if err != nil {
		return err
	}
	return s.end()
}

// transcriptionMember reads one member of a transcription object.
func (s *scanner) transcriptionMember(k []byte, e *TranscriptionEvent) error {
	var err error
	var text []byte
	switch string(k) {
	case "type":
		e.Type, err = s.stringOrSkip()
	case "delta":
		text, err = s.stringOrSkip()
		e.Delta = len(text) > 0
	case "text":
		text, err = s.stringOrSkip()
		e.Text = len(text) > 0
	case "choices":
		e.Choices = true
		err = s.skip()
	case "usage":
		err = s.transcriptionUsage(e)
	case "error":
		e.Error, e.ErrorMessage, err = s.errorValue()
	default:
		err = s.skip()
	}
	return err
}

// transcriptionUsage reads a usage object: tokens when its type is
// "tokens" (or it has token counts and no type), nothing for a duration.
func (s *scanner) transcriptionUsage(e *TranscriptionEvent) error {
	e.Usage, e.Input, e.Output = false, 0, 0
	if s.peek() != '{' {
		return s.skip()
	}
	duration, counted := false, false
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "type":
			duration, err = s.isString("duration")
		case "input_tokens":
			e.Input, err = s.count()
			counted = true
		case "output_tokens":
			e.Output, err = s.count()
			counted = true
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	e.Usage = counted && !duration
	return err
}

// readTranscriptionStream reads a streamed transcription: OpenAI's typed
// events (a non-empty transcript.text.delta is a content event,
// transcript.text.done ends the stream with the usage), or vLLM's chat
// chunks and [DONE], read as the chat stream is.
func (cl *call) readTranscriptionStream(resp *http.Response) error {
	shape := cl.c.shapes.Get().(*chunkShape)
	shape.reset()
	defer cl.c.putShape(shape)
	var e TranscriptionEvent
	var ck Chunk
	return cl.readSSE(resp, func(ev Event) (bool, error) {
		data := bytes.TrimSpace(ev.Data)
		a := arrival{ev.At, ev.ReadLag, ev.Kernel}
		switch {
		case len(data) == 0:
			return false, nil // a keep-alive
		case bytes.Equal(data, doneData):
			return true, nil
		case string(ev.Type) == "error":
			return false, streamError("error event: ", data)
		}
		if err := ScanTranscription(data, &e); err != nil {
			return false, cl.malformed(err)
		}
		if e.Choices && len(e.Type) == 0 {
			return false, cl.event(ev, shape, &ck) // vLLM's chunk
		}
		return cl.transcriptionEvent(&e, data, a)
	}, func() error {
		return cl.endWithout("transcript.text.done or [DONE]", "text/event-stream", resp)
	})
}

// transcriptionEvent folds one OpenAI transcription event into the trace
// and reports whether it ended the reply.
func (cl *call) transcriptionEvent(e *TranscriptionEvent, data []byte, a arrival) (bool, error) {
	if e.Error || string(e.Type) == "error" {
		return false, streamError("error event: ", data)
	}
	switch string(e.Type) {
	case "transcript.text.delta":
		if e.Delta {
			return false, cl.token(a, false)
		}
	case "transcript.text.done":
		cl.transcriptionUsage(e)
		if e.Text && cl.t.ContentEvents == 0 {
			// A transcript that came whole in its done event: one event.
			return true, cl.token(a, false)
		}
		return true, nil
	}
	return false, nil
}

// transcriptionUsage takes an event's or reply's token usage.
func (cl *call) transcriptionUsage(e *TranscriptionEvent) {
	if e.Usage {
		cl.t.UsageReported = true
		cl.t.PromptTokens, cl.t.CompletionTokens = e.Input, e.Output
	}
}

// applyTranscriptionBody checks a whole transcription reply ({"text",
// "usage"}): its text is the one content event.
func (cl *call) applyTranscriptionBody(b []byte, a arrival) error {
	var e TranscriptionEvent
	if err := ScanTranscription(b, &e); err != nil {
		return &failure{record.ErrMalformedEvent, "reply body: " + err.Error()}
	}
	if e.Error {
		return streamError("error in reply: ", b)
	}
	cl.transcriptionUsage(&e)
	if e.Text {
		if err := cl.token(a, false); err != nil {
			return err
		}
	}
	return emptyOutput(cl.t)
}
