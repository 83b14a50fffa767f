package protocol

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/inferload/inferload/record"
)

// TestReadWholeBudget: a whole reply is read while the shared budget
// allows, fails as client_resource (not the target's fault) when other
// replies hold the budget, fails as malformed past the per-reply limit,
// and gives every lent byte back on release.
func TestReadWholeBudget(t *testing.T) {
	t.Parallel()
	budget := &byteBudget{limit: 1 << 20}
	body := bytes.Repeat([]byte("x"), 300<<10)

	// Room for it: read whole, and the budget is empty again after release.
	b, release, err := readWhole(bytes.NewReader(body), 64<<20, budget)
	if err != nil || !bytes.Equal(b, body) {
		t.Fatalf("read %d bytes, err %v; want all %d", len(b), err, len(body))
	}
	if budget.used.Load() == 0 {
		t.Fatal("a 300 KiB reply was read without borrowing from the budget")
	}
	release()
	if n := budget.used.Load(); n != 0 {
		t.Fatalf("%d bytes still lent after release", n)
	}

	// Other replies hold all but 100 KiB: this one is refused as the client's limit.
	budget.take(budget.limit - 100<<10)
	_, release, err = readWhole(bytes.NewReader(body), 64<<20, budget)
	release()
	var f *failure
	if !errors.As(err, &f) || f.kind != record.ErrClientResource {
		t.Fatalf("with the budget held: %v, want a client_resource failure", err)
	}
	budget.give(budget.limit - 100<<10)

	// Over the per-reply limit: reply_too_large, whatever the budget.
	_, release, err = readWhole(bytes.NewReader(body), 100<<10, budget)
	release()
	if !errors.As(err, &f) || f.kind != record.ErrReplyTooLarge || !strings.Contains(f.msg, "100 KiB") {
		t.Fatalf("over the limit: %v, want reply_too_large naming 100 KiB", err)
	}
	if n := budget.used.Load(); n != 0 {
		t.Fatalf("%d bytes still lent after the failures", n)
	}
}

// TestReadWholeExactLimit: the per-reply limit is exact, at every size of
// read: limit bytes are a reply, limit+1 are reply_too_large, and the
// buffer never grows past the limit (it used to double past it, so the
// real cap of a 64 MiB limit was 128 MiB).
func TestReadWholeExactLimit(t *testing.T) {
	t.Parallel()
	const limit = 100<<10 + 3 // not a power of two: doubling never lands on it
	for _, tc := range []struct {
		name string
		size int
		want record.ErrorKind
	}{
		// One byte short of the limit: read whole.
		{"limit-1", limit - 1, record.ErrNone},
		// Exactly the limit: read whole, the buffer exactly full.
		{"limit", limit, record.ErrNone},
		// One byte more: refused, and not one byte more is held.
		{"limit+1", limit + 1, record.ErrReplyTooLarge},
		// Far more: refused the same.
		{"3x limit", 3 * limit, record.ErrReplyTooLarge},
	} {
		for _, oneByte := range []bool{false, true} {
			budget := &byteBudget{limit: 1 << 20}
			var r io.Reader = bytes.NewReader(bytes.Repeat([]byte("x"), tc.size))
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			b, release, err := readWhole(r, limit, budget)
			var f *failure
			switch {
			case tc.want == record.ErrNone && (err != nil || len(b) != tc.size):
				t.Errorf("%s (one byte a read %v): %d bytes, %v; want all %d", tc.name, oneByte, len(b), err, tc.size)
			case tc.want != record.ErrNone && (!errors.As(err, &f) || f.kind != tc.want):
				t.Errorf("%s (one byte a read %v): %v, want %s", tc.name, oneByte, err, tc.want)
			case cap(b) > limit || budget.used.Load() > limit:
				t.Errorf("%s: buffer of %d bytes (%d lent) past the %d-byte limit", tc.name, cap(b), budget.used.Load(), limit)
			}
			release()
		}
	}
}
