package engine

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/inferload/inferload/workload"
)

// TestPrefixLedger: the first request of each class's prefix group is a
// miss by design, every later one is built to reuse the prefix; a later
// conversation turn keeps its own (whole-history) reuse; no ledger marks
// nothing.
func TestPrefixLedger(t *testing.T) {
	t.Parallel()
	l := NewPrefixLedger()
	spec := func(class string, group, turn, reuse int) workload.Spec {
		return workload.Spec{Class: class, PrefixGroup: group, PrefixTokens: 100, Turn: turn, ReuseTokens: reuse}
	}
	for _, tc := range []struct {
		name string
		spec workload.Spec
		want int
	}{
		{"first of a group: a miss", spec("chat", 1, 0, 0), 0},
		{"second of the group: reuse", spec("chat", 1, 0, 0), 100},
		{"another group", spec("chat", 2, 0, 0), 0},
		{"the same group of another class", spec("rag", 1, 0, 0), 0},
		{"no prefix", spec("chat", 0, 0, 0), 0},
		{"a later turn keeps its history's reuse", spec("chat", 3, 2, 500), 500},
		{"a trace's larger block reuse stays", spec("chat", 2, 0, 300), 300},
	} {
		s := tc.spec
		l.mark(&s)
		if s.ReuseTokens != tc.want {
			t.Errorf("%s: ReuseTokens %d, want %d", tc.name, s.ReuseTokens, tc.want)
		}
	}
	var none *PrefixLedger
	s := spec("chat", 1, 0, 0)
	none.mark(&s)
	if s.ReuseTokens != 0 {
		t.Errorf("a nil ledger marked reuse %d", s.ReuseTokens)
	}
}

// TestPrefixLedgerConcurrent: of many requests of one prefix prepared at
// once, exactly one is the miss.
func TestPrefixLedgerConcurrent(t *testing.T) {
	t.Parallel()
	l := NewPrefixLedger()
	var misses atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				s := workload.Spec{Class: "c", PrefixGroup: 1, PrefixTokens: 10}
				l.mark(&s)
				if s.ReuseTokens == 0 {
					misses.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if misses.Load() != 1 {
		t.Errorf("%d misses among 800 requests of one prefix, want 1", misses.Load())
	}
}
