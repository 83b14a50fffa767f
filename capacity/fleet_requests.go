package capacity

import (
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/workload"
)

// sessionSource is a workload whose closed-loop users each send a stream
// of their own (workload.Mix with multi-turn classes): a conversation's
// later turns carry its history, as in a real run (engine's sessions).
type sessionSource interface {
	Session(user uint64) workload.Session
}

// fleetRequests renders the plan's workload as the fleet sees it, once:
// each fleet size (and each router compared) is offered the same
// requests, and rendering a prompt to hash it costs more than simulating
// it.
type fleetRequests struct {
	w         *FleetWorkload
	blockSize int
	// open holds request i of the plain stream (Requests.Spec(i)).
	open []FleetRequest
	// sessions is nil when the workload has no conversations; otherwise
	// user u's stream, and byUser[u] its requests rendered so far.
	sessions func(user uint64) workload.Session
	streams  []workload.Session
	byUser   [][]FleetRequest
}

func newFleetRequests(w *FleetWorkload, blockSize int) *fleetRequests {
	r := &fleetRequests{w: w, blockSize: blockSize}
	if src, ok := w.Requests.(sessionSource); ok && src.Session(0) != nil {
		r.sessions = src.Session
	}
	return r
}

// request is request i of the plan's plain stream (open loops, and
// closed loops without conversations).
func (r *fleetRequests) request(i uint64) FleetRequest {
	for uint64(len(r.open)) <= i {
		r.open = append(r.open, r.render(r.w.Requests.Spec(uint64(len(r.open)))))
	}
	return r.open[i]
}

// userRequest is closed-loop user u's k-th request from its session, as
// the run's user u would send it: the content depends on (seed, u, k)
// only, so every simulation offers the same conversations. Its affinity
// is u+1, as the engine gives a session's requests.
func (r *fleetRequests) userRequest(u, k int) FleetRequest {
	for len(r.streams) <= u {
		r.streams = append(r.streams, r.sessions(uint64(len(r.streams))))
		r.byUser = append(r.byUser, nil)
	}
	for len(r.byUser[u]) <= k {
		n := len(r.byUser[u])
		// The index only numbers the spec; it does not change its content.
		spec := r.streams[u].Next(uint64(n))
		h := r.hash(spec)
		if spec.KeepReply {
			threadReply(r.streams[u], h, replyStart(u, n), spec.MaxTokens)
		}
		req := fleetRequest(spec, h)
		req.Affinity = uint64(u) + 1
		r.byUser[u] = append(r.byUser[u], req)
	}
	return r.byUser[u][k]
}

// threadReply threads the reply a turn will get into its conversation,
// as a real run threads the server's (history: replies, the default): the
// text the simulator writes for a reply of that length goes into the
// session's history, and the turn's hashes run on over it, so the replica
// that computes the reply caches its full blocks and the next turn, which
// opens with this prompt and this reply, finds them there. A fleet's
// requests generate their whole output (ignore_eos), so no reply is cut.
func threadReply(s workload.Session, h *sim.PromptHasher, start uint64, maxTokens int) {
	out := max(1, maxTokens)
	s.Reply(sim.ReplyText(start, out), out)
	h.AddReply(start, out)
}

// replyStart is where user u's n-th reply starts in the simulator's
// vocabulary: a function of (u, n) alone, so every simulation offers the
// same conversations.
func replyStart(u, n int) uint64 { return mix64(uint64(u)<<32 ^ uint64(n)) }

// render is one spec as the fleet sees it (fleetRequest).
func (r *fleetRequests) render(spec workload.Spec) FleetRequest {
	return fleetRequest(spec, r.hash(spec))
}

// hash hashes spec's prompt in blocks. A later turn's messages open with
// the previous turn's, so its leading blocks are that turn's blocks.
func (r *fleetRequests) hash(spec workload.Spec) *sim.PromptHasher {
	h := sim.NewPromptHasher(r.blockSize)
	for _, m := range spec.Messages {
		h.AddText(m.Content)
	}
	if len(spec.Messages) == 0 {
		h.AddText(spec.Prompt)
	}
	return h
}

// fleetRequest is one spec as the fleet sees it: its class, lengths (the
// output exactly max_tokens, as with ignore_eos) and the chained block
// hashes h holds, for prefix caching and the prefix router.
func fleetRequest(spec workload.Spec, h *sim.PromptHasher) FleetRequest {
	return FleetRequest{Class: spec.Class, PromptTokens: max(1, spec.InputTokens),
		OutputTokens: max(1, spec.MaxTokens), BlockHashes: h.BlockHashes()}
}
