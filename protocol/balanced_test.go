package protocol

import (
	"context"
	"sync"
	"testing"
)

// servedBy is a Client that counts what it served.
type servedBy struct {
	mu     sync.Mutex
	n      int
	closed bool
}

func (s *servedBy) Do(_ context.Context, _ *Request, t *Trace) {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	t.Replica = 99 // overwritten by Balanced: a client of one target knows no replica
}

func (s *servedBy) Close() { s.closed = true }

// TestBalanced: requests without an affinity take turns over the
// replicas; those with one stay on one replica, numbered users spread
// evenly; each trace names its replica from 1; Close closes them all.
func TestBalanced(t *testing.T) {
	t.Parallel()
	reps := []*servedBy{{}, {}, {}}
	b := NewBalanced([]Client{reps[0], reps[1], reps[2]})
	var tr Trace
	for i := range 9 {
		b.Do(context.Background(), &Request{}, &tr)
		if tr.Replica != i%3+1 {
			t.Fatalf("request %d went to replica %d, want %d in turn", i, tr.Replica, i%3+1)
		}
	}
	for _, r := range reps {
		if r.n != 3 {
			t.Errorf("a replica served %d of 9, want 3", r.n)
		}
	}
	for user := uint64(1); user <= 6; user++ {
		first := 0
		for range 4 {
			b.Do(context.Background(), &Request{Affinity: user}, &tr)
			if first == 0 {
				first = tr.Replica
			}
			if tr.Replica != first {
				t.Fatalf("user %d's requests went to replicas %d and %d", user, first, tr.Replica)
			}
		}
		if want := int((user-1)%3) + 1; first != want {
			t.Errorf("user %d on replica %d, want %d (users spread in turn)", user, first, want)
		}
	}
	b.Close()
	for i, r := range reps {
		if !r.closed {
			t.Errorf("replica %d not closed", i+1)
		}
	}
}
