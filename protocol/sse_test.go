package protocol

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sseEvent is a copy of an Event that outlives the next call to Next.
type sseEvent struct {
	Type, Data string
}

// readEvents reads every event of r, copying each.
func readEvents(r *SSEReader) ([]sseEvent, error) {
	var out []sseEvent
	for i := 0; ; i++ {
		if i > 1<<20 {
			return out, errors.New("no end after a million events")
		}
		ev, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, sseEvent{string(ev.Type), string(ev.Data)})
	}
}

func TestSSEReaderParses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []sseEvent
	}{
		// The common case: one data line per event, LF endings.
		{"lf", "data: a\n\ndata: b\n\n", []sseEvent{{"", "a"}, {"", "b"}}},
		// Several data lines join with "\n"; the first line's space is stripped once.
		{"multiline", "data: a\ndata:b\ndata:  c\n\n", []sseEvent{{"", "a\nb\n c"}}},
		// "data:" with no space keeps the value as is.
		{"no space", "data:{\"x\":1}\n\n", []sseEvent{{"", `{"x":1}`}}},
		// Comments and keep-alives produce no events, even between fields.
		{"comments", ": keep-alive\n\ndata: a\n: inside\ndata: b\n\n:\n\n", []sseEvent{{"", "a\nb"}}},
		// CRLF line endings, as some proxies rewrite them.
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []sseEvent{{"", "a"}, {"", "b"}}},
		// Bare CR line endings are legal SSE.
		{"cr", "data: a\r\rdata: b\r\r", []sseEvent{{"", "a"}, {"", "b"}}},
		// Mixed endings in one stream.
		{"mixed", "data: a\r\ndata: b\r\n\rdata: c\n\r\n", []sseEvent{{"", "a\nb"}, {"", "c"}}},
		// event: sets the type of the event it belongs to only.
		{"event type", "event: error\ndata: boom\n\ndata: ok\n\n", []sseEvent{{"error", "boom"}, {"", "ok"}}},
		// id and retry fields and unknown fields are ignored.
		{"ignored fields", "id: 7\nretry: 100\nfoo: bar\ndata: a\n\n", []sseEvent{{"", "a"}}},
		// A stream that ends without the final blank line still delivers its last event.
		{"no final blank line", "data: a\n\ndata: [DONE]\n", []sseEvent{{"", "a"}, {"", "[DONE]"}}},
		// ... even without the final line break.
		{"no final newline", "data: a\n\ndata: [DONE]", []sseEvent{{"", "a"}, {"", "[DONE]"}}},
		// Blank lines without fields dispatch nothing.
		{"only blank lines", "\n\n\r\n\r\r\n", nil},
		// A field name with no colon has an empty value.
		{"bare data", "data\n\n", []sseEvent{{"", ""}}},
		// An empty data value still makes an event (the spec's "data:" case).
		{"empty data", "data:\n\n", []sseEvent{{"", ""}}},
		// A leading byte order mark is dropped.
		{"bom", "\xEF\xBB\xBFdata: a\n\n", []sseEvent{{"", "a"}}},
		// llama.cpp reports failures as an "error:" field: an event of type error.
		{"llama.cpp error field", "data: a\n\nerror: {\"code\":500}\n\n", []sseEvent{{"", "a"}, {"error", `{"code":500}`}}},
		// An event with a type but no data is still dispatched (an error must never vanish).
		{"type only", "event: error\n\n", []sseEvent{{"error", ""}}},
		// A colon in the value is kept.
		{"colon in value", "data: a: b\n\n", []sseEvent{{"", "a: b"}}},
	}
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte", iotest.OneByteReader},
		{"half", iotest.HalfReader},
		{"data with EOF", iotest.DataErrReader},
	}
	for _, tc := range tests {
		for _, rd := range readers {
			got, err := readEvents(NewSSEReader(rd.wrap(strings.NewReader(tc.in)), time.Now))
			if err != io.EOF {
				t.Errorf("%s/%s: error %v, want io.EOF", tc.name, rd.name, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s/%s: events (-want +got):\n%s", tc.name, rd.name, diff)
			}
		}
	}
}

// chunkedReader returns one chunk per Read, as a socket would deliver them.
type chunkedReader struct {
	chunks []string
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	r.chunks[0] = r.chunks[0][n:]
	if r.chunks[0] == "" {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

// tickClock returns instants one second apart, one per call.
func tickClock() func() time.Time {
	base := time.Unix(1000, 0)
	n := 0
	return func() time.Time {
		n++
		return base.Add(time.Duration(n) * time.Second)
	}
}

func TestSSEReaderStampsTheReadThatCompletesTheEvent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		chunks []string
		want   []int // read number (1-based) that stamps each event
	}{
		// The blank line arrives in the second read: that read's instant counts.
		{"split before blank line", []string{"data: a\n", "\ndata: b\n\n"}, []int{2, 2}},
		// Several events in one read share its instant.
		{"three in one read", []string{"data: a\n\ndata: b\n\ndata: c\n\n"}, []int{1, 1, 1}},
		// An event split mid-field completes on the read holding its end.
		{"split mid field", []string{"da", "ta: {\"x\"", ":1}\n\n", "data: b\n\n"}, []int{3, 4}},
		// A CR at the end of a read ends the line; the LF of a CRLF in the next read is dropped.
		{"crlf split", []string{"data: a\r", "\n\r", "\n"}, []int{2}},
		// An unterminated last event is stamped by its last read.
		{"eof event", []string{"data: a\n\n", "data: [DONE]"}, []int{1, 2}},
	}
	for _, tc := range tests {
		r := NewSSEReader(&chunkedReader{chunks: append([]string(nil), tc.chunks...)}, tickClock())
		var got []int
		for {
			ev, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			got = append(got, int(ev.At.Sub(time.Unix(1000, 0))/time.Second))
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: read numbers (-want +got):\n%s", tc.name, diff)
		}
	}
}

// repeatReader repeats a pattern up to n bytes without allocating.
type repeatReader struct {
	pattern []byte
	off     int
	left    int64 // < 0: forever
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	if r.left > 0 && int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.pattern[r.off:])
		n += c
		r.off = (r.off + c) % len(r.pattern)
	}
	if r.left > 0 {
		r.left -= int64(n)
	}
	return n, nil
}

func TestSSEReaderBoundsMemory(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	tests := []struct {
		name    string
		pattern string
		size    int64
		wantErr error
	}{
		// A line that never ends is cut off at the limit.
		{"endless line", "data: xxxxxxxxxxxxxxxxxxxx", 1 << 20, ErrEventTooLarge},
		// Data lines that never meet a blank line are cut off at the limit.
		{"endless event", "data: 0123456789abcdef\n", 1 << 20, ErrEventTooLarge},
		// Endless comments are consumed line by line and never grow the buffer.
		{"endless comments", ": keep-alive\n", 8 << 20, io.EOF},
		// Endless small events are fine.
		{"endless events", "data: x\n\n", 8 << 20, io.EOF},
	}
	for _, tc := range tests {
		r := NewSSEReader(&repeatReader{pattern: []byte(tc.pattern), left: tc.size}, time.Now)
		r.SetMaxEventSize(limit)
		var err error
		for err == nil {
			_, err = r.Next()
		}
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.wantErr)
		}
		if got := r.BufferSize(); got > 2*limit+sseInitialBuffer {
			t.Errorf("%s: buffers grew to %d bytes, limit %d", tc.name, got, limit)
		}
		if _, again := r.Next(); !errors.Is(again, tc.wantErr) {
			t.Errorf("%s: second Next after the end gave %v, want %v again", tc.name, again, tc.wantErr)
		}
	}
}

func TestSSEReaderReportsReadErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	tests := []struct {
		name string
		r    io.Reader
		want []sseEvent
		err  error
	}{
		// Complete events before the error are delivered; the partial one is dropped.
		{"error mid event", io.MultiReader(strings.NewReader("data: a\n\ndata: partial\n"), iotest.ErrReader(boom)),
			[]sseEvent{{"", "a"}}, boom},
		// A reader that returns nothing forever is stopped.
		{"no progress", iotest.ErrReader(nil), nil, io.ErrNoProgress},
	}
	for _, tc := range tests {
		got, err := readEvents(NewSSEReader(tc.r, time.Now))
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestSSEReaderReset(t *testing.T) {
	t.Parallel()
	r := NewSSEReader(strings.NewReader("data: a\ndata: b"), time.Now)
	if _, err := readEvents(r); err != io.EOF {
		t.Fatalf("first stream: %v", err)
	}
	r.Reset(strings.NewReader("data: c\n\n"))
	got, err := readEvents(r)
	if err != io.EOF || len(got) != 1 || got[0].Data != "c" {
		t.Errorf("after Reset: events %v, error %v; want one event \"c\"", got, err)
	}
	if r.BytesRead() != int64(len("data: c\n\n")) {
		t.Errorf("BytesRead %d after Reset, want %d", r.BytesRead(), len("data: c\n\n"))
	}
}

// vllmChunk is a typical vLLM chat chunk, the unit of the parse benchmarks.
const vllmChunk = `data: {"id":"chatcmpl-8f2c1b0e6a6d4b2f9a1f3c5d7e9b0a12","object":"chat.completion.chunk",` +
	`"created":1727000000,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"content":" the"},` +
	`"logprobs":null,"finish_reason":null}]}` + "\n\n"

func TestSSEReaderAllocatesNothingPerEvent(t *testing.T) {
	r := NewSSEReader(&repeatReader{pattern: []byte(vllmChunk), left: -1}, time.Now)
	for range 100 { // let the buffers reach their working size
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		ev, err := r.Next()
		if err != nil || !bytes.HasPrefix(ev.Data, []byte(`{"id"`)) {
			t.Fatalf("event %q, error %v", ev.Data, err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per event, want 0", allocs)
	}
}
