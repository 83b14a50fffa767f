package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// DefaultMaxEventSize bounds one Server-Sent Event (its data, or a single
// line while it is being read). A chat chunk is a few hundred bytes, one
// with top-20 logprobs a few KiB; 256 KiB leaves room for large tool-call
// chunks while bounding what a hostile target can make one stream hold:
// the line buffer and the event's data each stay under this, so with the
// kept event offsets (record.MaxEventsKept) a stream stays under 1 MiB
// whatever the server sends (BenchmarkEndlessStreamMemory).
const DefaultMaxEventSize = 256 << 10

// sseInitialBuffer matches net/http's own read buffer: one Read of a
// chunked body rarely returns more, and 10,000 idle streams cost 40 MiB.
const sseInitialBuffer = 4 << 10

// ErrEventTooLarge is returned by SSEReader.Next when one event or one line
// exceeds the reader's size limit.
var ErrEventTooLarge = errors.New("sse: event exceeds size limit")

// errNoProgress stops a reader that keeps returning 0 bytes and no error.
var errNoProgress = fmt.Errorf("sse: %w", io.ErrNoProgress)

// utf8BOM may open a stream; the SSE specification says to drop it.
var utf8BOM = []byte("\xEF\xBB\xBF")

// Event is one dispatched Server-Sent Event.
//
// Type and Data alias the reader's buffers: they are valid until the next
// call to Next. Data holds the event's data lines joined with "\n".
type Event struct {
	// Type is the value of the last "event:" field, empty when none was sent.
	Type []byte
	// Data is the event's payload.
	Data []byte
	// At is the monotonic instant right after the Read that delivered the
	// event's final bytes (its terminating blank line), taken before any
	// parsing of the payload; on the kernel clock (Kernel true), the
	// instant the kernel received those bytes instead.
	At time.Time
	// ReadLag is how long those bytes waited, after the kernel received
	// them, before the Read returned them to this reader: the client's own
	// delay, which the user-space clock adds to every latency. 0 unless
	// Kernel.
	ReadLag time.Duration
	// Kernel is true when At is the kernel's receive stamp (ClockKernel).
	Kernel bool
}

// SSEReader reads Server-Sent Events from a stream (WHATWG HTML, "Server-sent
// events", section 9.2.6) with buffers it reuses, so that reading an event
// allocates nothing once the buffers have grown to the stream's event size.
//
// Two deliberate extensions to the specification: an event still pending
// when the stream ends without its blank line is dispatched (servers often
// end with "data: [DONE]" and no blank line, and a load tester must see it),
// and a field named "error" (llama.cpp's way of reporting a failure inside a
// stream) is read as data of an event of type "error".
//
// An SSEReader is not safe for concurrent use.
type SSEReader struct {
	r   io.Reader
	now func() time.Time
	src rxSource // the connection's kernel stamps; nil: the user-space clock
	max int

	buf      []byte
	pos, end int // unparsed bytes are buf[pos:end]
	at       time.Time
	lag      time.Duration // at's read lag, when kernel
	kernel   bool          // at is a kernel stamp
	err      error         // sticky: the underlying reader's error, or the reader's own
	empty    int           // consecutive reads that returned nothing
	read     int64
	bomDone  bool
	skipLF   bool // a line ended in CR at the end of the buffer: drop a following LF
	pending  bool // the current event has a data or type field
	nData    int  // data lines in the current event
	typ      []byte
	data     []byte // data joined so far, once it cannot stay in buf
	dataOff  int    // a single data line still in buf: buf[dataOff:dataOff+dataLen]
	dataLen  int
	dataInBf bool
}

// NewSSEReader returns a reader of the events in r. now stamps each Read
// (time.Now when nil; tests may inject a clock).
func NewSSEReader(r io.Reader, now func() time.Time) *SSEReader {
	if now == nil {
		now = time.Now
	}
	return &SSEReader{
		r:   r,
		now: now,
		max: DefaultMaxEventSize,
		buf: make([]byte, sseInitialBuffer),
	}
}

// SetMaxEventSize changes the limit on one event or line (default
// DefaultMaxEventSize). Values below 64 bytes are raised to 64.
func (s *SSEReader) SetMaxEventSize(n int) {
	s.max = max(n, 64)
}

// Reset makes s read a new stream from r, keeping its buffers.
func (s *SSEReader) Reset(r io.Reader) {
	*s = SSEReader{
		r:    r,
		now:  s.now,
		max:  s.max,
		buf:  s.buf,
		typ:  s.typ[:0],
		data: s.data[:0],
	}
}

// resetStamped is Reset for a stream whose connection keeps kernel receive
// stamps (src; nil for none): each read is stamped with the kernel's
// stamp of the read that delivered its bytes, converted by fromKernel.
func (s *SSEReader) resetStamped(r io.Reader, src rxSource) {
	s.Reset(r)
	s.src = src
}

// BytesRead returns how many bytes s has read from its stream.
func (s *SSEReader) BytesRead() int64 { return s.read }

// BufferSize returns the capacity s currently holds for reading, so a pool
// can drop a reader that grew for one huge event.
func (s *SSEReader) BufferSize() int { return cap(s.buf) + cap(s.data) }

// Next returns the next event. At the end of the stream it returns io.EOF;
// any other error of the underlying reader is returned as it is, after the
// events completed before it. A malformed stream cannot make Next loop or
// grow past the size limit: it returns ErrEventTooLarge instead.
func (s *SSEReader) Next() (Event, error) {
	for {
		line, ok := s.line()
		if !ok {
			if s.err != nil {
				return s.finish()
			}
			if err := s.fill(); err != nil {
				s.err = err
				return Event{}, err
			}
			continue
		}
		if len(line) > s.max {
			s.err = ErrEventTooLarge
			return Event{}, s.err
		}
		ev, dispatched, err := s.field(line)
		if err != nil {
			s.err = err
			return Event{}, err
		}
		if dispatched {
			return ev, nil
		}
	}
}

// line cuts the next complete line (LF, CRLF or CR terminated) out of the
// buffer. It reports false when the buffer holds no complete line.
func (s *SSEReader) line() ([]byte, bool) {
	if !s.bomDone && !s.dropBOM() {
		return nil, false
	}
	b := s.buf[s.pos:s.end]
	if s.skipLF && len(b) > 0 {
		s.skipLF = false
		if b[0] == '\n' {
			s.pos++
			b = b[1:]
		}
	}
	lf := bytes.IndexByte(b, '\n')
	head := b
	if lf >= 0 {
		head = b[:lf]
	}
	if cr := bytes.IndexByte(head, '\r'); cr >= 0 {
		return s.cutCR(b, cr), true
	}
	if lf < 0 {
		return nil, false
	}
	s.pos += lf + 1
	return b[:lf], true
}

// cutCR ends a line at the CR at b[cr], swallowing an LF right after it.
// A CR that is the last buffered byte may still be followed by an LF in the
// next read; skipLF remembers to drop it then.
func (s *SSEReader) cutCR(b []byte, cr int) []byte {
	switch {
	case cr+1 == len(b):
		s.skipLF = true
		s.pos += cr + 1
	case b[cr+1] == '\n':
		s.pos += cr + 2
	default:
		s.pos += cr + 1
	}
	return b[:cr]
}

// dropBOM removes a UTF-8 byte order mark at the start of the stream. It
// reports false while too few bytes have arrived to tell.
func (s *SSEReader) dropBOM() bool {
	b := s.buf[s.pos:s.end]
	if len(b) < len(utf8BOM) && s.err == nil && bytes.HasPrefix(utf8BOM, b) {
		return false
	}
	if bytes.HasPrefix(b, utf8BOM) {
		s.pos += len(utf8BOM)
	}
	s.bomDone = true
	return true
}

// field interprets one line. It reports true when the line was blank and
// completed an event.
func (s *SSEReader) field(line []byte) (Event, bool, error) {
	if len(line) == 0 {
		if !s.pending {
			return Event{}, false, nil
		}
		return s.dispatch(), true, nil
	}
	if line[0] == ':' { // comment, e.g. ": keep-alive"
		return Event{}, false, nil
	}
	name, value := line, line[len(line):]
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		return Event{}, false, s.appendData(value)
	case "event":
		s.typ = append(s.typ[:0], value...)
		s.pending = true
	case "error":
		s.typ = append(s.typ[:0], "error"...)
		return Event{}, false, s.appendData(value)
	}
	// "id", "retry" and unknown fields change nothing a client here uses.
	return Event{}, false, nil
}

// appendData adds one data line. The first line stays where it is in buf
// (no copy); a second line, or a refill of buf, moves the data to s.data.
func (s *SSEReader) appendData(value []byte) error {
	if s.nData == 0 {
		// value aliases buf, so its offset follows from the capacities.
		s.dataOff = cap(s.buf) - cap(value)
		s.dataLen = len(value)
		s.dataInBf = true
	} else {
		s.spill()
		if len(s.data)+1+len(value) > s.max {
			return ErrEventTooLarge
		}
		s.data = append(s.data, '\n')
		s.data = append(s.data, value...)
	}
	s.nData++
	s.pending = true
	return nil
}

// spill copies a data line held in buf to s.data, before buf is refilled or
// another line is joined to it.
func (s *SSEReader) spill() {
	if !s.dataInBf {
		return
	}
	s.data = append(s.data[:0], s.buf[s.dataOff:s.dataOff+s.dataLen]...)
	s.dataInBf = false
}

// dispatch hands out the pending event and starts a new one.
func (s *SSEReader) dispatch() Event {
	ev := Event{Type: s.typ, Data: s.data, At: s.at, ReadLag: s.lag, Kernel: s.kernel}
	if s.dataInBf {
		ev.Data = s.buf[s.dataOff : s.dataOff+s.dataLen]
	}
	if ev.Data == nil {
		ev.Data = s.buf[:0]
	}
	s.typ = s.typ[:0]
	s.data = s.data[:0]
	s.dataInBf = false
	s.nData = 0
	s.pending = false
	return ev
}

// finish runs when the underlying reader has failed or ended and no
// complete line is left. At a clean end, an unterminated last line is read
// as a line and a pending event is dispatched (see SSEReader); after any
// other error a partial event is dropped.
func (s *SSEReader) finish() (Event, error) {
	if s.err != io.EOF {
		return Event{}, s.err
	}
	if s.pos < s.end {
		line := s.buf[s.pos:s.end]
		s.pos = s.end
		if _, _, err := s.field(line); err != nil {
			s.err = err
			return Event{}, err
		}
	}
	if s.pending {
		return s.dispatch(), nil
	}
	return Event{}, io.EOF
}

// fill reads more of the stream, compacting or growing buf when it is full.
func (s *SSEReader) fill() error {
	s.spill()
	switch {
	case s.pos == s.end:
		s.pos, s.end = 0, 0
	case s.end == len(s.buf) && s.pos > 0:
		s.end = copy(s.buf, s.buf[s.pos:s.end])
		s.pos = 0
	case s.end == len(s.buf):
		if err := s.grow(); err != nil {
			return err
		}
	}
	n, err := s.r.Read(s.buf[s.end:])
	if n > 0 { // a read that only reports EOF delivered nothing to stamp
		s.at, s.lag, s.kernel = readStamp(s.now(), s.src)
	}
	s.end += n
	s.read += int64(n)
	return s.noteRead(n, err)
}

// grow doubles buf for a line longer than it, up to the size limit.
func (s *SSEReader) grow() error {
	if s.end-s.pos >= s.max {
		return ErrEventTooLarge
	}
	nb := make([]byte, min(2*len(s.buf), s.max+1))
	s.end = copy(nb, s.buf[s.pos:s.end])
	s.pos = 0
	s.buf = nb
	return nil
}

// noteRead keeps the reader's error for when the buffered bytes are used
// up, and stops a reader that makes no progress.
func (s *SSEReader) noteRead(n int, err error) error {
	if err != nil {
		s.err = err
		return nil
	}
	if n > 0 {
		s.empty = 0
		return nil
	}
	s.empty++
	if s.empty >= 100 {
		return errNoProgress
	}
	return nil
}
