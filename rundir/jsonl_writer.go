package rundir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/inferload/inferload/record"
)

// FlushInterval bounds what a SIGKILL can lose: buffered lines reach the
// OS (page cache) at least this often. In a compressed file each such
// flush ends a zstd block, which keeps the frame's history (so records
// compress as well as in one-second frames) and which a reader decodes
// even when the frame never ends (zstd_frames.go).
const FlushInterval = 200 * time.Millisecond

// frameEvery is how often a compressed file's frame ends (with the line
// count after it): the uploader and the collector cut the file between
// frames, so it is how far behind the run a distributed run's live view
// lags.
const frameEvery = time.Second

// writerBufSize is large enough that a busy run makes one write syscall per
// many records, small enough to hold well under a second of them.
const writerBufSize = 64 << 10

// maxKeptLine is the largest line buffer kept for reuse between writes.
const maxKeptLine = 1 << 20

// frameTarget is how much input a compressed file's frame takes before
// the writer ends it even between flushes: enough history that records
// compress well, small enough that a reader, the uploader and the
// collector hold one frame in memory at a time.
const frameTarget = 4 << 20

// ErrWriterClosed is returned by Write after Close.
var ErrWriterClosed = errors.New("record: writer closed")

// JSONLWriter appends one JSON value per line to a file. It is safe for
// concurrent use. Lines are buffered and handed to the OS every
// FlushInterval (200 ms) by a background goroutine, and on Flush and
// Close, so a process killed with SIGKILL loses at most the lines of the
// last 200 ms (and may leave the last line cut short, which the readers
// tolerate).
//
// A path ending in ".zst" is written compressed, records in the compact
// form (record.AppendCompactResultJSON): each background flush ends a
// zstd block, every frameEvery (and on Flush and Close) the frame ends,
// followed by a skippable frame holding the count of lines written so far
// (zstd_frames.go), so the file up to the last flush always decodes and a
// reader can count the records a damaged stretch of it held.
type JSONLWriter struct {
	path string

	mu      sync.Mutex
	f       *os.File
	buf     *bufio.Writer
	zenc    *zstd.Encoder // nil for a plain file
	frameIn int           // bytes written into the zstd frame not yet ended
	blockIn int           // bytes written into the zstd block not yet ended
	lines   uint64        // lines written, for the count after each frame
	ticks   int           // background flushes since the frame began
	line    []byte        // one encoded line; reused so a line allocates nothing
	scratch bytes.Buffer  // where enc encodes values other than *Result
	enc     *json.Encoder // encodes into scratch
	err     error         // first write or flush error; sticky
	closed  bool
	closing sync.Once

	stop          chan struct{}
	done          chan struct{}
	ticksPerFrame int    // background flushes between frame ends
	onFlush       func() // test hook: called after each background flush, with mu held
}

// NewJSONLWriter opens path for appending (creating it if needed) and starts
// the background flusher. Close must be called to stop it.
func NewJSONLWriter(path string) (*JSONLWriter, error) {
	return newJSONLWriter(path, FlushInterval, nil)
}

func newJSONLWriter(path string, every time.Duration, onFlush func()) (*JSONLWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open record log: %w", err)
	}
	w := &JSONLWriter{
		path:    path,
		f:       f,
		buf:     bufio.NewWriterSize(f, writerBufSize),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		onFlush: onFlush,
		// A frame ends every frameEvery, whatever the flush interval.
		ticksPerFrame: max(1, int(frameEvery/every)),
	}
	if strings.HasSuffix(path, ".zst") {
		// Concurrency 1 encodes in the caller, starting no goroutines: a
		// run's records are a few MB/s at most, and its CPUs belong to the
		// load. The fastest level compresses records as well as the
		// default does (BENCHMARKS.md, "Record size") at less CPU.
		w.zenc, err = zstd.NewWriter(f, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(frameTarget),
			zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("open record log: %w", err)
		}
		w.buf.Reset(w.zenc)
	}
	w.enc = json.NewEncoder(&w.scratch)
	go w.flushEvery(every)
	return w, nil
}

// Write appends v as one JSON line. It returns the first error the writer
// has met (including one from a background flush), so a full disk is
// reported to the caller rather than lost.
func (w *JSONLWriter) Write(v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrWriterClosed
	}
	if w.err != nil {
		return w.err
	}
	// Encoding the whole line before writing means a value that cannot be
	// marshalled never leaves half a line in the file.
	line, err := w.encodeLine(v)
	if err != nil {
		return fmt.Errorf("%s: encode %T: %w", w.path, v, err)
	}
	if len(line) > MaxLineBytes {
		return fmt.Errorf("%s: %T of %d bytes is longer than a reader accepts (%d): not written",
			w.path, v, len(line), MaxLineBytes)
	}
	if _, err := w.buf.Write(line); err != nil {
		w.err = ioError(w.path, "write", err)
	}
	w.lines++
	if w.zenc != nil {
		w.blockIn += len(line)
		if w.frameIn += len(line); w.frameIn >= frameTarget {
			_ = w.flushLocked() // kept in w.err
		}
	}
	if cap(w.line) > maxKeptLine {
		w.line = nil // one giant record should not pin its buffer for the run
	}
	return w.err
}

// encodeLine renders v and its newline into a reused buffer. Records, the
// bulk of every run, take a reflection-free path with identical output.
func (w *JSONLWriter) encodeLine(v any) ([]byte, error) {
	if r, ok := v.(*record.Result); ok && r != nil {
		if w.zenc != nil {
			w.line = append(record.AppendCompactResultJSON(w.line[:0], r), '\n')
		} else {
			w.line = append(record.AppendResultJSON(w.line[:0], r), '\n')
		}
		return w.line, nil
	}
	w.scratch.Reset()
	if err := w.enc.Encode(v); err != nil {
		return nil, err
	}
	return w.scratch.Bytes(), nil
}

// Flush hands buffered lines to the OS now, ending a compressed file's
// frame.
func (w *JSONLWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *JSONLWriter) flushLocked() error {
	if w.err != nil || w.closed {
		return w.err
	}
	if err := w.buf.Flush(); err != nil {
		w.err = ioError(w.path, "flush", err)
		return w.err
	}
	if w.zenc != nil && w.frameIn > 0 {
		// Close ends the frame and writes it out; Reset starts the next,
		// which is written only once a line comes for it.
		if err := w.zenc.Close(); err != nil {
			w.err = ioError(w.path, "flush", err)
			return w.err
		}
		w.zenc.Reset(w.f)
		w.frameIn, w.blockIn, w.ticks = 0, 0, 0
		if _, err := w.f.Write(appendLineCount(nil, w.lines)); err != nil {
			w.err = ioError(w.path, "flush", err)
		}
	}
	return w.err
}

// flushBlockLocked is the background flush: buffered lines to the OS,
// ending a compressed file's block, and its frame every ticksPerFrame.
func (w *JSONLWriter) flushBlockLocked() error {
	if w.err != nil || w.closed {
		return w.err
	}
	if w.zenc == nil || w.frameIn == 0 {
		return w.flushLocked()
	}
	if w.ticks++; w.ticks >= w.ticksPerFrame {
		return w.flushLocked()
	}
	if w.buf.Buffered() == 0 && w.blockIn == 0 {
		return nil
	}
	if err := w.buf.Flush(); err != nil {
		w.err = ioError(w.path, "flush", err)
		return w.err
	}
	// Flush ends the block and writes it out, the frame's history kept.
	if err := w.zenc.Flush(); err != nil {
		w.err = ioError(w.path, "flush", err)
	}
	w.blockIn = 0
	return w.err
}

// ioError names the file and operation of a failed write once: an
// *os.PathError already says both ("write /x/records.jsonl: no space left
// on device"), anything else is wrapped with them.
func ioError(path, op string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}

func (w *JSONLWriter) flushEvery(every time.Duration) {
	defer close(w.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.mu.Lock()
			if w.buf.Buffered() > 0 || w.frameIn > 0 {
				_ = w.flushBlockLocked() // kept in w.err for the next Write
			}
			if w.onFlush != nil {
				w.onFlush()
			}
			w.mu.Unlock()
		}
	}
}

// Close stops the flusher, flushes what is buffered and closes the file.
// It returns the first error the writer met. Calling it again, even
// concurrently, is harmless.
func (w *JSONLWriter) Close() error {
	w.closing.Do(func() {
		close(w.stop)
		<-w.done
		w.mu.Lock()
		defer w.mu.Unlock()
		_ = w.flushLocked()
		w.closed = true
		if err := w.f.Close(); err != nil && w.err == nil {
			w.err = fmt.Errorf("%s: close: %w", w.path, err)
		}
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
