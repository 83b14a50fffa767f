package protocol

import (
	"bytes"
	"errors"
	"testing"

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

	// Over the per-reply limit: malformed, whatever the budget.
	_, release, err = readWhole(bytes.NewReader(body), 100<<10, budget)
	release()
	if !errors.As(err, &f) || f.kind != record.ErrMalformedEvent {
		t.Fatalf("over the limit: %v, want malformed_event", err)
	}
	if n := budget.used.Load(); n != 0 {
		t.Fatalf("%d bytes still lent after the failures", n)
	}
}
