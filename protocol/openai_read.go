package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/inferload/inferload/record"
)

const (
	// maxPooledReader: a reader that grew past this for one huge event is
	// dropped rather than kept for every later stream.
	maxPooledReader = 64 << 10
	// maxBody bounds a non-streaming reply held in memory.
	maxBody = 64 << 20
	// drainAfterDone bounds reading after [DONE]: the rest of the body is
	// read so the connection can be reused, but a server that keeps the
	// stream open after [DONE] must not hold the request. A server sends
	// the body's end with [DONE] or right after it; one that has not
	// within drainAfterDoneGrace loses the connection instead (the call's
	// context is canceled, which closes it). With a second here, such a
	// server made every closed-loop user wait a second after each success.
	drainAfterDone      = 64 << 10
	drainAfterDoneGrace = 20 * time.Millisecond
)

// doneData is the OpenAI end-of-stream sentinel.
var doneData = []byte("[DONE]")

// readStream reads an SSE reply, timestamping each content event.
func (cl *call) readStream(resp *http.Response) error {
	sse := cl.c.readers.Get().(*SSEReader)
	sse.resetStamped(resp.Body, cl.rx())
	defer cl.c.putReader(sse)
	defer func() { cl.t.BytesIn = sse.BytesRead() }()
	shape := cl.c.shapes.Get().(*chunkShape)
	shape.reset()
	defer cl.c.putShape(shape)
	var ck Chunk
	for {
		ev, err := sse.Next()
		switch {
		case err == io.EOF:
			return incomplete(cl.t, resp.Header.Get("Content-Type"))
		case errors.Is(err, ErrEventTooLarge):
			return &failure{record.ErrMalformedEvent, fmt.Sprintf("after %d content events: %v", cl.t.ContentEvents, err)}
		case err != nil:
			return err
		case bytes.Equal(bytes.TrimSpace(ev.Data), doneData):
			cl.t.SawDone = true
			cl.clock.end(cl.t, arrival{ev.At, ev.ReadLag, ev.Kernel})
			drain[Event](cl, sse)
			return emptyOutput(cl.t)
		}
		if err := cl.event(ev, shape, &ck); err != nil {
			return err
		}
	}
}

func (c *OpenAI) putReader(sse *SSEReader) {
	sse.Reset(nil)
	if sse.BufferSize() <= maxPooledReader {
		c.readers.Put(sse)
	}
}

func (c *OpenAI) putShape(sh *chunkShape) {
	if cap(sh.prefix)+cap(sh.suffix) <= maxPooledReader {
		c.shapes.Put(sh)
	}
}

// event folds one SSE event into the trace; shape is the stream's
// (chunkShape).
func (cl *call) event(ev Event, shape *chunkShape, ck *Chunk) error {
	t := cl.t
	switch string(ev.Type) {
	case "", "message":
	case "error":
		return streamError("error event: ", ev.Data)
	default:
		return nil // other event types carry nothing this client reads
	}
	if len(bytes.TrimSpace(ev.Data)) == 0 {
		return nil // an empty data line is a keep-alive
	}
	if err := shape.scan(ev.Data, ck); err != nil {
		return &failure{record.ErrMalformedEvent,
			fmt.Sprintf("event after %d content events: %v", t.ContentEvents, err)}
	}
	if ck.Error {
		return streamError("error event: ", ev.Data)
	}
	cl.apply(ck)
	if ck.Content && cl.req.KeepReply > 0 {
		cl.t.keepReply(ev.Data, cl.req.KeepReply)
	}
	if ck.Content && cl.req.KeepText > 0 {
		cl.t.keepText(ck, ev.Data, cl.req.KeepText)
	}
	if ck.Content || ck.Reasoning {
		return cl.token(arrival{ev.At, ev.ReadLag, ev.Kernel}, cl.reasoning(ck))
	}
	return nil
}

// apply copies usage and finish reason from a chunk.
func (cl *call) apply(ck *Chunk) {
	t := cl.t
	if ck.Usage {
		t.UsageReported = true
		t.PromptTokens = ck.PromptTokens
		t.CompletionTokens = ck.CompletionTokens
		t.ReasoningTokens = ck.ReasoningTokens
		t.CachedTokens = ck.CachedTokens
	}
	if ck.Timings.Present { // the final chunk only
		t.Timings = ck.Timings
	}
	if len(ck.FinishReason) > 0 {
		t.FinishReason = finishReason(ck.FinishReason)
	}
}

// arrival is when an event's bytes arrived, and on which clock.
type arrival struct {
	at     time.Time
	lag    time.Duration // the read lag, on the kernel clock
	kernel bool          // at is a kernel receive stamp
}

// readArrival stamps a read that has just returned on cl's connection.
func (cl *call) readArrival() arrival {
	var a arrival
	a.at, a.lag, a.kernel = readStamp(time.Now(), cl.rx())
	return a
}

// endRead ends the trace at the read that has just returned the body's
// end, stamped as the reply's other arrivals (recordClock).
func (cl *call) endRead() { cl.clock.end(cl.t, cl.readArrival()) }

// token records a content-carrying event that arrived at a, of the
// reasoning channel or else the answer's. A stream that
// goes on far past max_tokens fails here instead of being read until a
// timeout (record.OverrunLimit).
func (cl *call) token(a arrival, reasoning bool) error {
	t := cl.t
	if t.ContentEvents == 0 && cl.ttft != nil {
		cl.ttft.Stop()
	}
	at := cl.clock.event(t, a).Sub(t.Sent).Microseconds()
	t.ContentEvents++
	t.noteChannel(reasoning, at)
	if lim := record.OverrunLimit(cl.req.MaxTokens); lim > 0 && t.ContentEvents > lim {
		cl.clock.end(t, a)
		return &failure{record.ErrOutputOverrun, fmt.Sprintf(
			"stream went on past %d content events (max_tokens %d): cut off", lim, cl.req.MaxTokens)}
	}
	return nil
}

// drain reads what follows a stream's end ([DONE], a native API's final
// event or object: normally just the end of the chunked body) from r, an
// SSEReader or a LineReader, so the connection goes back to the pool.
func drain[E any](cl *call, r interface {
	Next() (E, error)
	BytesRead() int64
}) {
	tm := time.AfterFunc(drainAfterDoneGrace, func() { cl.cancel(errDrainTimeout) })
	defer tm.Stop()
	limit := r.BytesRead() + drainAfterDone
	for r.BytesRead() < limit {
		if _, err := r.Next(); err != nil {
			return
		}
	}
}

// incomplete describes a stream that ended without [DONE].
func incomplete(t *Trace, contentType string) error {
	msg := fmt.Sprintf("stream ended without [DONE] after %d content events", t.ContentEvents)
	if ct := strings.ToLower(contentType); ct != "" && !strings.HasPrefix(ct, "text/event-stream") {
		msg += fmt.Sprintf(" (Content-Type %q: the server did not stream)", contentType)
	}
	return &failure{record.ErrStreamIncomplete, msg}
}

// emptyOutput fails a finished reply that generated nothing.
func emptyOutput(t *Trace) error {
	if t.ContentEvents > 0 {
		return nil
	}
	msg := "reply finished with no content"
	if t.FinishReason != "" {
		msg += " (finish_reason " + t.FinishReason + ")"
	}
	return &failure{record.ErrEmptyOutput, msg}
}

// wholeBody reads a non-streaming reply, bounded by maxBody and by the
// process's budget for whole replies (heldBodies), and hands it to use with
// the instant its last byte arrived (also the trace's end). The bytes are
// only valid during use.
func (cl *call) wholeBody(body io.Reader, use func(b []byte, a arrival) error) error {
	b, release, err := readWhole(body, maxBody, &heldBodies)
	defer release()
	a := cl.readArrival()
	cl.t.BytesIn = int64(len(b))
	if err != nil {
		return err
	}
	cl.clock.end(cl.t, a)
	return use(b, a)
}

// replyError is the "error" member of a whole JSON reply (embeddings,
// images, Triton's /infer), embedded in the reply's type.
type replyError struct {
	Error json.RawMessage `json:"error"`
}

func (e *replyError) errorMember() json.RawMessage { return e.Error }

// checkWholeReply unmarshals a whole JSON reply into r. JSON that does not
// decode fails the request as malformed (named by what, "embeddings
// reply"); an error member holding anything but null fails it as the
// server's error, classified by its code.
func checkWholeReply(what string, b []byte, r interface{ errorMember() json.RawMessage }) error {
	if err := json.Unmarshal(b, r); err != nil {
		return &failure{record.ErrMalformedEvent, what + ": " + err.Error()}
	}
	if e := r.errorMember(); len(e) > 0 && string(e) != "null" {
		return streamError("error in reply: ", b)
	}
	return nil
}

// applyBody checks a whole chat or completions reply.
func (cl *call) applyBody(b []byte, a arrival) error {
	var ck Chunk
	if err := ScanChunk(b, &ck); err != nil {
		return &failure{record.ErrMalformedEvent, "reply body: " + err.Error()}
	}
	if ck.Error {
		return streamError("error in reply: ", b)
	}
	cl.apply(&ck)
	if ck.Content && cl.req.KeepReply > 0 {
		cl.t.keepReply(b, cl.req.KeepReply)
	}
	if ck.Content && cl.req.KeepText > 0 {
		cl.t.keepText(&ck, b, cl.req.KeepText)
	}
	if ck.Content || ck.Reasoning {
		_ = cl.token(a, cl.reasoning(&ck)) // one event never overruns
	}
	return emptyOutput(cl.t)
}

// finishReason returns the usual values without allocating.
func finishReason(b []byte) string {
	for _, s := range [...]string{"stop", "length", "tool_calls", "content_filter", "eos_token", "abort"} {
		if string(b) == s {
			return s
		}
	}
	return decodeJSONString(b)
}
