package capacity

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Router names how a fleet spreads requests over its replicas.
type Router string

// The routers a fleet can use.
const (
	// RoundRobin sends request i to the next replica in turn.
	RoundRobin Router = "round-robin"
	// LeastOutstanding sends each request to the replica with the fewest
	// requests in flight (ties go round the replicas), as Envoy's
	// least_request and most LLM gateways do.
	LeastOutstanding Router = "least-outstanding"
	// PrefixAware sends a request to the replica that took the longest
	// prefix of its prompt before (prefixRouter), when that prefix is at
	// least half the prompt and the replica holds no more than
	// prefixLoadBound times the mean in flight; otherwise to the replica
	// with the fewest in flight. A conversation's next turn follows its
	// history, requests sharing a long document go together, and
	// conversations that share only a system prompt spread out.
	PrefixAware Router = "prefix"
	// Sticky sends every request of one closed-loop user (its
	// conversations: FleetRequest.Affinity) to one replica, user u to
	// replica u mod the replicas up, as inferload's own target.replicas
	// does; requests without an affinity go round-robin. It never
	// spills: a user's turns stay where the history is cached however
	// busy that replica is.
	Sticky Router = "session"
)

// Routers lists the routers in the order docs and flags show them.
func Routers() []Router { return []Router{RoundRobin, LeastOutstanding, PrefixAware, Sticky} }

// prefixLoadBound is how far above the mean load the prefix router lets
// a replica go before it spills a request elsewhere: 1.25 keeps most
// prefix hits while no replica carries a hot prefix alone.
const prefixLoadBound = 1.25

type router interface {
	// pick returns one of up (replica indices, ascending) for req, given
	// each replica's requests in flight; -1 when up is empty.
	pick(up []int, inflight []int, req FleetRequest) int
}

// newRouter returns a router of kind r for replicas whose KV blocks hold
// blockSize tokens.
func newRouter(r Router, blockSize int) (router, error) {
	switch r {
	case RoundRobin, "":
		return &roundRobin{}, nil
	case LeastOutstanding:
		return &leastOutstanding{}, nil
	case PrefixAware:
		return &prefixRouter{blockSize: blockSize}, nil
	case Sticky, "sticky":
		return &stickyRouter{}, nil
	}
	names := make([]string, 0, 4)
	for _, k := range Routers() {
		names = append(names, string(k))
	}
	return nil, fmt.Errorf("router %q: want one of %s", r, strings.Join(names, ", "))
}

type roundRobin struct{ next int }

func (r *roundRobin) pick(up []int, _ []int, _ FleetRequest) int {
	if len(up) == 0 {
		return -1
	}
	k := up[r.next%len(up)]
	r.next++
	return k
}

// leastOutstanding breaks ties by starting its scan where the last pick
// left off, so an idle fleet is filled evenly, not replica 0 first.
type leastOutstanding struct{ start int }

func (l *leastOutstanding) pick(up []int, inflight []int, _ FleetRequest) int {
	if len(up) == 0 {
		return -1
	}
	best := -1
	for j := range up {
		k := up[(l.start+j)%len(up)]
		if best < 0 || inflight[k] < inflight[best] {
			best = k
		}
	}
	l.start++
	return best
}

// prefixRouter remembers, for each KV block hash it has seen, the
// replica it last sent a request holding that block: an approximation of
// the replicas' caches, as SGLang's and vLLM production-stack's routers
// keep one from the traffic they route. Block hashes are chained, so a
// hit on block i means that replica was sent the whole prefix up to it;
// walking the prompt's blocks from the last one down finds the longest.
// A request's blocks include its reply's where the request carries them
// (FleetRequest.BlockHashes): the router sees the reply pass through.
//
// A match shorter than half the prompt is not worth a detour: a shared
// system prompt of a block or two would otherwise pull every conversation
// onto the replica that saw it first (the first-block key this router
// used before did that), while each conversation's next turn, whose
// history is at least half its prompt, still follows it.
type prefixRouter struct {
	blockSize int
	// seen and older are two generations of block → replica: when seen
	// fills up it becomes older and a fresh one starts, so the memory
	// stays bounded and the blocks forgotten first are the least recent,
	// as a cache's eviction forgets them.
	seen, older map[uint64]int
	fallback    leastOutstanding
}

// prefixRouterMemory is how many blocks one generation remembers: about
// a million, more than a hundred a100-7b replicas' caches hold.
const prefixRouterMemory = 1 << 20

func (p *prefixRouter) pick(up []int, inflight []int, req FleetRequest) int {
	k := p.longestPrefix(up, req)
	if k < 0 || overloaded(up, inflight, k) {
		k = p.fallback.pick(up, inflight, req)
	}
	if k >= 0 {
		p.remember(req, k)
	}
	return k
}

// longestPrefix is the replica up that took the longest prefix of req's
// prompt, at least half of it; -1 when none did.
func (p *prefixRouter) longestPrefix(up []int, req FleetRequest) int {
	blocks := min(len(req.BlockHashes), req.PromptTokens/max(p.blockSize, 1))
	for i := blocks - 1; i >= 0 && 2*(i+1) >= blocks; i-- {
		k, ok := p.seen[req.BlockHashes[i]]
		if !ok {
			k, ok = p.older[req.BlockHashes[i]]
		}
		if ok && slices.Contains(up, k) {
			return k
		}
	}
	return -1
}

// remember records that replica k was sent req's blocks.
func (p *prefixRouter) remember(req FleetRequest, k int) {
	if p.seen == nil || len(p.seen)+len(req.BlockHashes) > prefixRouterMemory {
		p.older, p.seen = p.seen, make(map[uint64]int, len(p.seen))
	}
	for _, h := range req.BlockHashes {
		p.seen[h] = k
	}
}

// overloaded reports whether replica k would hold more than
// prefixLoadBound times the mean in flight with one more request
// (consistent hashing with bounded loads).
func overloaded(up []int, inflight []int, k int) bool {
	total := 0
	for _, j := range up {
		total += inflight[j]
	}
	mean := float64(total+1) / float64(len(up))
	return float64(inflight[k]+1) > prefixLoadBound*mean+1
}

type stickyRouter struct{ fallback roundRobin }

// pick numbers affinities as protocol.Balanced does (users 1, 2, 3, ...
// taken in turn spread evenly), over the replicas up.
func (s *stickyRouter) pick(up []int, inflight []int, req FleetRequest) int {
	if len(up) == 0 || req.Affinity == 0 {
		return s.fallback.pick(up, inflight, req)
	}
	return up[(req.Affinity-1)%uint64(len(up))]
}

// mix64 is splitmix64's finaliser: a cheap hash with good avalanche.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Fleet events, in time order; at one instant arrivals come before step
// ends, so a request arriving as a step ends joins the next step.
type eventKind uint8

const (
	evArrival eventKind = iota
	evStepEnd
)

type event struct {
	at   time.Duration
	kind eventKind
	who  int // the user (closed loop; -1 open) or the replica
	seq  uint64
}

type eventHeap struct {
	evs []event
	n   uint64
}

func (h *eventHeap) Len() int { return len(h.evs) }
func (h *eventHeap) Less(i, j int) bool {
	a, b := h.evs[i], h.evs[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.seq < b.seq
}
func (h *eventHeap) Swap(i, j int) { h.evs[i], h.evs[j] = h.evs[j], h.evs[i] }
func (h *eventHeap) Push(x any) {
	ev := x.(event)
	ev.seq = h.n
	h.n++
	h.evs = append(h.evs, ev)
}
func (h *eventHeap) Pop() any {
	ev := h.evs[len(h.evs)-1]
	h.evs = h.evs[:len(h.evs)-1]
	return ev
}

var _ heap.Interface = (*eventHeap)(nil)

// sortByIndex orders fleet requests by their index.
func sortByIndex(s []*fleetSeq) {
	slices.SortFunc(s, func(a, b *fleetSeq) int { return cmp.Compare(a.out.Index, b.out.Index) })
}
