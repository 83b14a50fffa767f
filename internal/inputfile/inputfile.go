// Package inputfile reads the files a user hands inferload (API key and
// token files, CA bundles, plans, tokenizers, traces, datasets) with a
// limit named for each kind and a context, so a wrong path (/dev/zero, a
// FIFO nobody writes, a disk image) fails fast with a clear error instead
// of growing the process to gigabytes, and a signal stops the read.
package inputfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Kind is a kind of input file and the most bytes one may hold.
type Kind struct {
	// Name says what the file is, for errors: "an API key or token file".
	Name string
	// Limit is the largest size accepted, in bytes.
	Limit int64
	// Text refuses a file holding a NUL byte at the first one: no text
	// format has one, and a kind whose limit is gigabytes (a dataset)
	// should not be read that far to find out it is /dev/zero or a disk
	// image.
	Text bool
}

// The limits, each far above any real file of its kind (docs/plan.md,
// "Input files").
var (
	Key       = Kind{"an API key or token file", 64 << 10, false}
	CA        = Kind{"a CA bundle", 4 << 20, false}
	Plan      = Kind{"a plan file", 16 << 20, false}
	Tokenizer = Kind{"a tokenizer", 256 << 20, true}
	// SentencePiece is a tokenizer.model: binary protobuf, so NUL bytes
	// are expected. Gemma's, among the largest, is 4 MiB.
	SentencePiece = Kind{"a SentencePiece model", 64 << 20, false}
	Trace         = Kind{"a trace", 1 << 30, true}
	Dataset       = Kind{"a dataset", 2 << 30, true}
)

// chunk is the most one Read asks of the file, so a cancel is seen after
// at most this many bytes of a file that never blocks (/dev/zero).
const chunk = 1 << 20

// TooLargeError is the failure of a file past its kind's limit.
type TooLargeError struct {
	Path string
	Kind Kind
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %s (the limit for %s)", e.Path, Size(e.Kind.Limit), e.Kind.Name)
}

// NotTextError is the failure of a file of a Text kind holding a NUL byte.
type NotTextError struct {
	Path   string
	Kind   Kind
	Offset int64 // of the first NUL byte
}

func (e *NotTextError) Error() string {
	return fmt.Sprintf("%s: not text (a NUL byte at offset %d), so not %s", e.Path, e.Offset, e.Kind.Name)
}

// Size writes a byte count in the largest binary unit it is a whole
// number of (64 KiB, 2 GiB).
func Size(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// Read reads the file at path whole, failing with a *TooLargeError past
// k.Limit and with ctx's error once ctx is done, even while the open or
// a read blocks (a FIFO with no writer, or one that never writes).
func Read(ctx context.Context, path string, k Kind) ([]byte, error) {
	f, err := open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() <= k.Limit {
		buf.Grow(int(fi.Size()) + 1) // one read to EOF, no doubling past the file
	}
	_, err = buf.ReadFrom(NewReader(ctx, f, path, k))
	return buf.Bytes(), err
}

// open opens path for reading, giving up when ctx is done: opening a FIFO
// blocks until a writer opens it, and nothing else can interrupt that.
// The open left behind closes its file when it completes.
func open(ctx context.Context, path string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		if o.err == nil {
			stopOnCancel(ctx, o.f)
		}
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-done; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, fmt.Errorf("%s: %w", path, context.Cause(ctx))
	}
}

// stopOnCancel makes a read of f that blocks (a pipe or FIFO, which Go
// reads through its poller) return once ctx is done. Regular files and
// devices such as /dev/zero never block: NewReader's check between reads
// stops them.
func stopOnCancel(ctx context.Context, f *os.File) {
	context.AfterFunc(ctx, func() {
		_ = f.SetReadDeadline(time.Unix(1, 0)) // in the past: pending and later reads fail
	})
}

// NewReader wraps r, the contents of the file named path: reads fail with
// a *TooLargeError once more than k.Limit bytes came, and with ctx's error
// once ctx is done. A streaming reader (a dataset read line by line) wraps
// its file with it instead of reading it whole.
func NewReader(ctx context.Context, r io.Reader, path string, k Kind) io.Reader {
	return &reader{ctx: ctx, r: r, path: path, kind: k, left: k.Limit}
}

type reader struct {
	ctx  context.Context
	r    io.Reader
	path string
	kind Kind
	left int64 // bytes still allowed
}

func (r *reader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, fmt.Errorf("%s: %w", r.path, context.Cause(r.ctx))
	}
	// One byte past the limit is asked for, to tell a file of exactly
	// the limit from a longer one.
	p = p[:min(int64(len(p)), r.left+1, chunk)]
	n, err := r.r.Read(p)
	if r.kind.Text {
		if i := bytes.IndexByte(p[:n], 0); i >= 0 {
			return i, &NotTextError{Path: r.path, Kind: r.kind, Offset: r.kind.Limit - r.left + int64(i)}
		}
	}
	if int64(n) > r.left {
		return int(r.left), &TooLargeError{Path: r.path, Kind: r.kind}
	}
	r.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) && r.ctx.Err() != nil {
		return n, fmt.Errorf("%s: %w", r.path, context.Cause(r.ctx)) // the deadline stopOnCancel set
	}
	return n, err
}
