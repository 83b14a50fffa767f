package protocol

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/inferload/inferload/record"
)

// maxBodiesHeld bounds the bytes of whole (non-streaming) replies held in
// memory at once by every client of the process together. One reply may
// use up to maxBody, but a test of many users against a server answering
// with 100 MB bodies must not need 100 MB per user: past this budget a
// reply fails as record.ErrClientResource (a limit of the client, not a
// fault of the target) instead of growing the process without bound.
const maxBodiesHeld = 256 << 20

// bodyReadStep is the least free space a read of a whole reply asks for.
const bodyReadStep = 32 << 10

// byteBudget is a shared allowance of bytes; take fails rather than waits,
// so a full budget can never deadlock the readers holding it.
type byteBudget struct {
	limit int64
	used  atomic.Int64
}

func (b *byteBudget) take(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *byteBudget) give(n int64) { b.used.Add(-n) }

// heldBodies is the process's budget for whole replies.
var heldBodies = byteBudget{limit: maxBodiesHeld}

// bodyBuffers holds small buffers for non-streaming replies.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, bodyReadStep); return &b }}

// readWhole reads r into a buffer that grows only with budget granted,
// and never past limit bytes: a reply of exactly limit bytes is read
// whole, one of limit+1 fails as record.ErrReplyTooLarge once that one
// byte more is seen, and nothing past it is read. It returns the bytes and
// a release to call once they are no longer used (it gives the lent bytes
// back and the small buffer to its pool), and the failure if the reply is
// larger than limit or the budget is spent.
func readWhole(r io.Reader, limit int64, budget *byteBudget) (b []byte, release func(), err error) {
	pb := bodyBuffers.Get().(*[]byte)
	b = (*pb)[:0]
	var lent int64
	release = func() {
		budget.give(lent)
		bodyBuffers.Put(pb)
	}
	for {
		if len(b) == cap(b) {
			if int64(len(b)) >= limit {
				return b, release, overLimit(r, b, limit)
			}
			// Double, as append would, but stop at the limit: the buffer
			// never holds more than one reply may.
			grow := min(int64(max(cap(b), bodyReadStep)), limit-int64(cap(b)))
			if !budget.take(grow) {
				return b, release, &failure{record.ErrClientResource, fmt.Sprintf(
					"whole replies in flight hold the client's %d MiB budget: this one (%d KiB so far) is not read",
					budget.limit>>20, len(b)>>10)}
			}
			lent += grow
			nb := make([]byte, len(b), int64(cap(b))+grow)
			copy(nb, b)
			b = nb
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, release, nil
		}
		if err != nil {
			return b, release, err
		}
	}
}

// overLimit reads whether r, having given limit bytes, has one more: nil
// when it ends there, ErrReplyTooLarge when it does not.
func overLimit(r io.Reader, b []byte, limit int64) error {
	var one [1]byte
	for range 100 { // a reader may return 0, nil a few times
		n, err := r.Read(one[:])
		switch {
		case n > 0:
			return &failure{record.ErrReplyTooLarge, fmt.Sprintf(
				"reply body longer than %s, the cap for one non-streamed reply: not read further", sizeText(limit))}
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
	}
	return io.ErrNoProgress
}

// sizeText writes a byte count in the unit it is a whole number of.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
