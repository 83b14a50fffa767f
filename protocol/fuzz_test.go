package protocol

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// FuzzSSE checks that any byte stream, however it is split into reads,
// gives the same events (no panic, no endless loop, bounded memory), and
// that every event's chunk scan terminates.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("data: a\n\ndata: [DONE]\n\n"), uint8(3))
	f.Add([]byte("event: error\r\ndata: {\"error\":\"x\"}\r\n\r\n: ping\r\r"), uint8(1))
	f.Add([]byte("\xEF\xBB\xBFdata:x\ndata\nid: 1\n\ndata: y"), uint8(7))
	f.Fuzz(func(t *testing.T, stream []byte, split uint8) {
		const limit = 1 << 10
		whole := fuzzEvents(t, bytes.NewReader(stream), limit)
		pieces := fuzzEvents(t, &splitReader{b: stream, n: int(split%16) + 1}, limit)
		oneByte := fuzzEvents(t, iotest.OneByteReader(bytes.NewReader(stream)), limit)
		if diff := cmp.Diff(whole, pieces); diff != "" {
			t.Errorf("split every %d bytes changes the events (-whole +split):\n%s", split%16+1, diff)
		}
		if diff := cmp.Diff(whole, oneByte); diff != "" {
			t.Errorf("one-byte reads change the events (-whole +one byte):\n%s", diff)
		}
	})
}

// fuzzResult is everything a stream parse produced.
type fuzzResult struct {
	Events  []sseEvent
	TooBig  bool
	Verdict []string // ScanChunk's outcome per event
}

func fuzzEvents(t *testing.T, r io.Reader, limit int) fuzzResult {
	sse := NewSSEReader(r, time.Now)
	sse.SetMaxEventSize(limit)
	var res fuzzResult
	for range 1 << 16 {
		ev, err := sse.Next()
		if errors.Is(err, ErrEventTooLarge) {
			res.TooBig = true
			return res
		}
		if err == io.EOF {
			return res
		}
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		if len(ev.Data) > limit || bytes.ContainsAny(ev.Data, "\r") {
			t.Fatalf("event data %q breaks the limit or holds a CR", ev.Data)
		}
		res.Events = append(res.Events, sseEvent{string(ev.Type), string(ev.Data)})
		var c Chunk
		verdict := "ok"
		if ScanChunk(ev.Data, &c) != nil {
			verdict = "malformed"
		}
		res.Verdict = append(res.Verdict, verdict)
	}
	t.Fatal("stream of bounded length gave 65536 events")
	return res
}

// splitReader returns at most n bytes per Read.
type splitReader struct {
	b []byte
	n int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[k:]
	return k, nil
}

// FuzzChunk checks ScanChunk against encoding/json: every valid JSON
// object is accepted and described exactly as encoding/json reads it, and
// no input makes it panic.
func FuzzChunk(f *testing.F) {
	f.Add([]byte(`{"choices":[{"delta":{"content":"a"},"finish_reason":null}],"usage":null}`))
	f.Add([]byte(`{"error":{"message":"x"}}`))
	f.Add([]byte(`{"ch\u006fices":[{"text":"\ud83d\ude00"}],"usage":{"completion_tokens_details":{"reasoning_tokens":3}}}`))
	chunkScan.fuzz(f)
}
