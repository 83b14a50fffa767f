package protocol

import (
	"bytes"
	"io"
	"time"
)

// Line is one line of a newline-delimited JSON stream. Data aliases the
// reader's buffer: it is valid until the next call to Next.
type Line struct {
	// Data is the line without its terminator (LF or CRLF).
	Data []byte
	// At is when the line's last byte arrived: on the user-space clock
	// the monotonic instant right after the Read that delivered it, taken
	// before any parsing; on the kernel clock (Kernel true) the kernel's
	// receive stamp of that Read, as for SSE events (Event.At).
	At time.Time
	// ReadLag is how long those bytes waited in the socket before the
	// read, when Kernel.
	ReadLag time.Duration
	// Kernel is true when At is the kernel's receive stamp (ClockKernel).
	Kernel bool
}

// LineReader reads the lines of a newline-delimited stream (Ollama's
// NDJSON) with one buffer it reuses, so reading a line allocates nothing
// once the buffer has grown to the stream's longest line. Blank lines are
// skipped; a last line without its newline is returned at the end of the
// stream. A LineReader is not safe for concurrent use.
type LineReader struct {
	r        io.Reader
	now      func() time.Time
	src      rxSource // the connection's kernel stamps; nil: the user-space clock
	max      int
	buf      []byte
	pos, end int
	at       time.Time
	lag      time.Duration // at's read lag, when kernel
	kernel   bool          // at is a kernel stamp
	err      error
	empty    int
	read     int64
}

// NewLineReader returns a reader of the lines of r. now stamps each Read
// (time.Now when nil).
func NewLineReader(r io.Reader, now func() time.Time) *LineReader {
	if now == nil {
		now = time.Now
	}
	return &LineReader{r: r, now: now, max: DefaultMaxEventSize, buf: make([]byte, sseInitialBuffer)}
}

// SetMaxLineSize changes the limit on one line (default
// DefaultMaxEventSize); values below 64 bytes are raised to 64.
func (l *LineReader) SetMaxLineSize(n int) { l.max = max(n, 64) }

// Reset makes l read a new stream from r, keeping its buffer.
func (l *LineReader) Reset(r io.Reader) {
	*l = LineReader{r: r, now: l.now, max: l.max, buf: l.buf}
}

// resetStamped is Reset for a stream whose connection keeps kernel receive
// stamps (src; nil for none), as SSEReader.resetStamped.
func (l *LineReader) resetStamped(r io.Reader, src rxSource) {
	l.Reset(r)
	l.src = src
}

// line is the Line of data, stamped with the read that completed it.
func (l *LineReader) line(data []byte) Line {
	return Line{Data: data, At: l.at, ReadLag: l.lag, Kernel: l.kernel}
}

// BytesRead returns how many bytes l has read from its stream.
func (l *LineReader) BytesRead() int64 { return l.read }

// BufferSize returns the capacity l holds, so a pool can drop a reader
// that grew for one huge line.
func (l *LineReader) BufferSize() int { return cap(l.buf) }

// Next returns the next non-blank line; io.EOF at a clean end, the
// underlying reader's error otherwise, ErrEventTooLarge for a line over
// the limit.
func (l *LineReader) Next() (Line, error) {
	for {
		if i := bytes.IndexByte(l.buf[l.pos:l.end], '\n'); i >= 0 {
			data := l.buf[l.pos : l.pos+i]
			l.pos += i + 1
			data = bytes.TrimSuffix(data, []byte{'\r'})
			if len(data) > l.max {
				l.err = ErrEventTooLarge
				return Line{}, l.err
			}
			if len(bytes.TrimSpace(data)) == 0 {
				continue
			}
			return l.line(data), nil
		}
		if l.err != nil {
			return l.finish()
		}
		if err := l.fill(); err != nil {
			l.err = err
			return Line{}, err
		}
	}
}

// finish hands out an unterminated last line after a clean end.
func (l *LineReader) finish() (Line, error) {
	if l.err != io.EOF {
		return Line{}, l.err
	}
	data := bytes.TrimSuffix(l.buf[l.pos:l.end], []byte{'\r'})
	l.pos = l.end
	if len(data) > l.max {
		l.err = ErrEventTooLarge
		return Line{}, l.err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Line{}, io.EOF
	}
	return l.line(data), nil
}

// fill reads more, compacting or growing the buffer when it is full.
func (l *LineReader) fill() error {
	switch {
	case l.pos == l.end:
		l.pos, l.end = 0, 0
	case l.end == len(l.buf) && l.pos > 0:
		l.end = copy(l.buf, l.buf[l.pos:l.end])
		l.pos = 0
	case l.end == len(l.buf):
		if l.end-l.pos > l.max {
			return ErrEventTooLarge
		}
		nb := make([]byte, min(2*len(l.buf), l.max+2))
		l.end = copy(nb, l.buf[l.pos:l.end])
		l.pos = 0
		l.buf = nb
	}
	n, err := l.r.Read(l.buf[l.end:])
	if n > 0 { // a read that only reports EOF delivered nothing to stamp
		l.at, l.lag, l.kernel = readStamp(l.now(), l.src)
		l.empty = 0
	}
	l.end += n
	l.read += int64(n)
	if err != nil {
		l.err = err
		return nil
	}
	if n == 0 {
		if l.empty++; l.empty >= 100 {
			return errNoProgress
		}
	}
	return nil
}
