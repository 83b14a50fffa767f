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
		// The index only numbers the spec; it does not change its content.
		req := r.render(r.streams[u].Next(uint64(len(r.byUser[u]))))
		req.Affinity = uint64(u) + 1
		r.byUser[u] = append(r.byUser[u], req)
	}
	return r.byUser[u][k]
}

// render is one spec as the fleet sees it: its class, lengths (the
// output exactly max_tokens, as with ignore_eos) and the prompt's chained
// block hashes, for prefix caching and the prefix router. A later turn's
// messages open with the previous turn's, so its leading blocks are
// that turn's prompt blocks.
func (r *fleetRequests) render(spec workload.Spec) FleetRequest {
	h := sim.NewPromptHasher(r.blockSize)
	for _, m := range spec.Messages {
		h.AddText(m.Content)
	}
	if len(spec.Messages) == 0 {
		h.AddText(spec.Prompt)
	}
	return FleetRequest{Class: spec.Class, PromptTokens: max(1, spec.InputTokens),
		OutputTokens: max(1, spec.MaxTokens), BlockHashes: h.BlockHashes()}
}
