package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Replay is a phase that replays recorded sessions (an agent trace): each
// session's calls in order, each sent a recorded delay after the reply
// it waits for ended, so a session keeps its order and think times
// whatever the server's speed, while sessions start at their recorded
// times as arrivals do in an open loop. A session's requests come from
// the Source's session stream (Session(s)) and carry its Group as their
// affinity, so a client over replicas keeps a recorded task on one.
type Replay struct {
	// Sessions are the recorded sessions; a session may wait on one
	// listed before it only.
	Sessions []ReplaySession
	// LateAfter marks a root session's first call late when its start
	// lagged its due time by more than this (every other call is due by
	// the replies before it, and never late).
	LateAfter time.Duration
}

// ReplaySession is one recorded session.
type ReplaySession struct {
	// Start is when the first call is due, from the phase start, unless
	// the session waits on a parent.
	Start time.Duration
	// Parent, when 0 or more, is the session (listed before this one)
	// whose call ParentCall this session's first call waits for: it is
	// due Delays[0] after that call's reply ended.
	Parent, ParentCall int
	// Delays[k] is how long call k waits after the reply before it (the
	// session's call k-1) ended, or after the last of its Joins' replies
	// when that ended later; len(Delays) is the session's calls.
	// Delays[0] counts only with a parent.
	Delays []time.Duration
	// Joins[k], when set, lists subagent sessions (whose Parent is this
	// session, spawned by a call before k) whose last reply call k waits
	// for too: a parent resumes once its subagents have answered. nil
	// when no call joins one.
	Joins [][]int
	// Group keys the session's requests' affinity: sessions of one
	// recorded task share it.
	Group uint64
}

// Validate says what keeps the replay from running.
func (r Replay) Validate() error {
	for s, rs := range r.Sessions {
		if len(rs.Delays) == 0 {
			return fmt.Errorf("engine: replay session %d has no calls", s)
		}
		if rs.Parent >= s || rs.Parent >= 0 && (rs.ParentCall < 0 || rs.ParentCall >= len(r.Sessions[rs.Parent].Delays)) {
			return fmt.Errorf("engine: replay session %d waits on session %d call %d: want a call of a session listed before it", s, rs.Parent, rs.ParentCall)
		}
		if rs.Start < 0 || slices.Min(rs.Delays) < 0 {
			return fmt.Errorf("engine: replay session %d: counts and durations must not be negative", s)
		}
		if err := r.validateJoins(s); err != nil {
			return err
		}
	}
	return nil
}

// validateJoins holds session s's joins to subagents spawned by an
// earlier call of s: a join on anything else could wait on itself.
func (r Replay) validateJoins(s int) error {
	rs := r.Sessions[s]
	if rs.Joins != nil && len(rs.Joins) != len(rs.Delays) {
		return fmt.Errorf("engine: replay session %d has %d calls but joins for %d", s, len(rs.Delays), len(rs.Joins))
	}
	for k, joins := range rs.Joins {
		for _, c := range joins {
			if k == 0 || c < 0 || c >= len(r.Sessions) || r.Sessions[c].Parent != s || r.Sessions[c].ParentCall >= k {
				return fmt.Errorf("engine: replay session %d call %d joins session %d: want a subagent an earlier call of it spawned", s, k, c)
			}
		}
	}
	return nil
}

// Run sends the sessions' calls as they fall due.
func (r Replay) Run(ph *Phase) { ph.e.runReplay(ph, r) }

// runReplay runs each recorded task (a root session with the subagents
// it spawned, at any depth) as a graph of requests (graph_requests.go),
// each on its own goroutine (counted in ph.requests), and returns once
// issuing stops or every task has had its last reply.
func (e *Engine) runReplay(ph *Phase, r Replay) {
	var tasks sync.WaitGroup
	for _, sessions := range r.tasks() {
		rs := r.Sessions[sessions[0]]
		rt := &requestTask{ph: ph, due: rs.Start, lateAfter: r.LateAfter, user: rs.Group,
			streams: make([]taskStream, len(sessions))}
		for k, s := range sessions {
			rt.streams[k] = taskStream{sess: e.session(uint64(s)), calls: len(r.Sessions[s].Delays)}
		}
		g := r.graph(sessions)
		tasks.Add(1)
		ph.requests.Go(func() {
			defer tasks.Done()
			e.runRequests(g, rt)
		})
	}
	allDone := make(chan struct{})
	go func() { tasks.Wait(); close(allDone) }()
	select {
	case <-ph.issueCtx.Done():
	case <-allDone:
	}
}

// tasks lists the sessions of each recorded task, in the order of their
// roots: the root first, then its subagents at any depth, as listed.
func (r Replay) tasks() [][]int {
	task := make([]int, len(r.Sessions)) // session → its task
	var out [][]int
	for s, rs := range r.Sessions {
		if rs.Parent < 0 {
			task[s] = len(out)
			out = append(out, nil)
		} else {
			task[s] = task[rs.Parent] // a parent is listed before its subagents
		}
		out[task[s]] = append(out[task[s]], s)
	}
	return out
}

// graph is one recorded task as a graph of requests: a node per call,
// each after the call before it in its session and the last calls of
// the subagents it joins (a subagent's first call after the call that
// spawned it), its recorded delay after them, built by its session's
// stream. Nodes are in an order in which each comes after those it
// waits for (a joined subagent is listed after the parent that joins it).
func (r Replay) graph(sessions []int) *graphPlan {
	stream := make(map[int]int, len(sessions)) // session → its stream in the task
	for k, s := range sessions {
		stream[s] = k
	}
	type call struct{ s, k int }
	var deps [][]call
	var calls []call
	for _, s := range sessions {
		rs := r.Sessions[s]
		for k := range rs.Delays {
			var d []call
			switch {
			case k > 0:
				d = append(d, call{s, k - 1})
				if k < len(rs.Joins) {
					for _, j := range rs.Joins[k] {
						d = append(d, call{j, len(r.Sessions[j].Delays) - 1})
					}
				}
			case rs.Parent >= 0:
				d = append(d, call{rs.Parent, rs.ParentCall})
			}
			calls, deps = append(calls, call{s, k}), append(deps, d)
		}
	}
	// Kahn's order: Validate made the waits acyclic.
	node := make(map[call]int, len(calls))
	g := &Graph{Nodes: make([]Node, 0, len(calls))}
	for len(g.Nodes) < len(calls) {
		for c, cl := range calls {
			if _, done := node[cl]; done {
				continue
			}
			n := Node{Stream: stream[cl.s]}
			ready := true
			for _, d := range deps[c] {
				u, ok := node[d]
				ready = ready && ok
				n.After = append(n.After, u)
			}
			if !ready {
				continue
			}
			if len(n.After) > 0 {
				n.Delay = constantDelay(r.Sessions[cl.s].Delays[cl.k])
			}
			node[cl] = len(g.Nodes)
			g.Nodes = append(g.Nodes, n)
		}
	}
	return g.plan()
}

// constantDelay is a Delay of exactly its value.
type constantDelay time.Duration

func (d constantDelay) Sample(*rand.Rand) time.Duration { return time.Duration(d) }
