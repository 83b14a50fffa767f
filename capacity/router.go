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
	// PrefixAware sends requests that open with the same prompt block to
	// the same replica (rendezvous hashing, stable as replicas join), so
	// its prefix cache serves them, unless that replica holds more than
	// prefixLoadBound times the mean in flight; then it falls back to
	// least-outstanding (consistent hashing with bounded loads).
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

func newRouter(r Router) (router, error) {
	switch r {
	case RoundRobin, "":
		return &roundRobin{}, nil
	case LeastOutstanding:
		return &leastOutstanding{}, nil
	case PrefixAware:
		return &prefixRouter{}, nil
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

type prefixRouter struct{ fallback leastOutstanding }

func (p *prefixRouter) pick(up []int, inflight []int, req FleetRequest) int {
	if len(up) == 0 || len(req.BlockHashes) == 0 {
		return p.fallback.pick(up, inflight, req)
	}
	key, best, bestScore := req.BlockHashes[0], -1, uint64(0)
	for _, k := range up {
		if s := mix64(key ^ (uint64(k)+1)*0x9e3779b97f4a7c15); best < 0 || s > bestScore {
			best, bestScore = k, s
		}
	}
	total := 0
	for _, k := range up {
		total += inflight[k]
	}
	mean := float64(total+1) / float64(len(up))
	if float64(inflight[best]+1) > prefixLoadBound*mean+1 {
		return p.fallback.pick(up, inflight, req)
	}
	return best
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
