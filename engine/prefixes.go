package engine

import (
	"sync"

	"github.com/inferload/inferload/workload"
)

// PrefixLedger notes which shared prefixes a run has sent, so a request
// whose prefix an earlier request of the run carried is marked as built
// to reuse it (workload.Spec.ReuseTokens), and the summary can set the
// reuse the workload asked for against what the server says it served
// (record.PrefixReuse). The first request of each prefix is a miss by
// design. It is per run, shared by the run's phases (a sweep's steps send
// to one server, whose cache outlives a step), in the order requests are
// prepared, which is the order they are sent. Safe for concurrent use;
// nil marks nothing.
type PrefixLedger struct {
	mu   sync.Mutex
	sent map[prefixKey]struct{}
}

// prefixKey names one shared prefix: its class's, by group.
type prefixKey struct {
	class string
	group int
}

// NewPrefixLedger returns an empty ledger for one run.
func NewPrefixLedger() *PrefixLedger {
	return &PrefixLedger{sent: map[prefixKey]struct{}{}}
}

// mark sets spec's ReuseTokens to its shared prefix's length when an
// earlier request carried that prefix, and notes it as sent. A later turn
// of a conversation already asks to reuse its whole history, the prefix
// included, so it is left as it is.
func (l *PrefixLedger) mark(spec *workload.Spec) {
	if l == nil || spec.PrefixGroup == 0 || spec.Turn > 0 {
		return
	}
	k := prefixKey{spec.Class, spec.PrefixGroup}
	l.mu.Lock()
	_, seen := l.sent[k]
	if !seen {
		l.sent[k] = struct{}{}
	}
	l.mu.Unlock()
	if seen {
		spec.ReuseTokens = max(spec.ReuseTokens, spec.PrefixTokens)
	}
}
