package protocol

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/inferload/inferload/record"
)

// Each read that delivers bytes is one TorchServe content event; the body's
// clean end is the end, a broken body a failure.
func TestTorchServeStreamEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   io.Reader
		events int
		err    record.ErrorKind
	}{
		// One byte a read: one event each.
		{"per byte", iotest.OneByteReader(strings.NewReader("abcde")), 5, record.ErrNone},
		// The whole body in one read: one event.
		{"one read", strings.NewReader("abcde"), 1, record.ErrNone},
		// Nothing at all is not an answer.
		{"empty", strings.NewReader(""), 0, record.ErrEmptyOutput},
		// A body cut off mid-way is not a clean end.
		{"cut", iotest.DataErrReader(io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(io.ErrUnexpectedEOF))), 1, record.ErrOther},
	}
	for _, tt := range tests {
		cl := benchCall()
		err := cl.readTorchServeStream(&http.Response{Body: io.NopCloser(tt.body)})
		kind := record.ErrNone
		var f *failure
		switch {
		case errors.As(err, &f):
			kind = f.kind
		case err != nil:
			kind = record.ErrOther
		}
		if cl.t.ContentEvents != tt.events || kind != tt.err {
			t.Errorf("%s: %d events, %v; want %d, %s", tt.name, cl.t.ContentEvents, err, tt.events, tt.err)
		}
	}
}

// BenchmarkTorchServeRead is TorchServe's per-chunk path: one read of a
// token-sized chunk and its event. One op is one chunk.
func BenchmarkTorchServeRead(b *testing.B) {
	cl := benchCall()
	r := &chunkPerRead{chunk: []byte(" learning")}
	resp := &http.Response{Body: io.NopCloser(r)}
	r.left = b.N
	b.ReportAllocs()
	b.ResetTimer()
	if err := cl.readTorchServeStream(resp); err != nil {
		b.Fatal(err)
	}
	if cl.t.ContentEvents != b.N {
		b.Fatalf("%d events for %d chunks", cl.t.ContentEvents, b.N)
	}
}

// chunkPerRead returns one chunk a Read, left times, then io.EOF.
type chunkPerRead struct {
	chunk []byte
	left  int
}

func (r *chunkPerRead) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	r.left--
	return copy(p, r.chunk), nil
}
