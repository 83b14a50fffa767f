package protocol

import (
	"context"
	"sync/atomic"
)

// Balanced spreads requests over clients of replicas of one model, as a
// load balancer in front of them would, so a few replicas can be tested
// (and a fleet prediction checked) without one: round-robin, except that
// requests sharing an Affinity go to one replica (a conversation whose
// server holds its history, or whose prefix is cached there). Each
// trace's Replica says which served it. Safe for concurrent use.
type Balanced struct {
	clients []Client
	next    atomic.Uint64
}

// NewBalanced returns a client taking turns over clients (at least one).
func NewBalanced(clients []Client) *Balanced {
	return &Balanced{clients: clients}
}

// Do sends req to the replica whose turn it is, or to its affinity's.
func (b *Balanced) Do(ctx context.Context, req *Request, t *Trace) {
	i := b.pick(req)
	b.clients[i].Do(ctx, req, t)
	t.Replica = i + 1
}

// pick is the replica index for req.
func (b *Balanced) pick(req *Request) int {
	n := uint64(len(b.clients))
	if req != nil && req.Affinity != 0 {
		// Affinities are numbered (users 1, 2, 3, ...): taken in turn they
		// spread evenly.
		return int((req.Affinity - 1) % n)
	}
	return int((b.next.Add(1) - 1) % n)
}

// Replicas are the clients taken in turn, target.url's first: read only.
func (b *Balanced) Replicas() []Client { return b.clients }

// Close closes every replica's client that can be closed.
func (b *Balanced) Close() {
	for _, c := range b.clients {
		if cl, ok := c.(interface{ Close() }); ok {
			cl.Close()
		}
	}
}
