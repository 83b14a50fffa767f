package engine

import (
	"context"
	"fmt"
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
	// LateAfter marks a request late when its start lagged its due time
	// by more than this.
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

// runReplay runs each session in its own goroutine (counted in
// ph.requests) and returns once issuing stops or every session has had
// its last reply.
func (e *Engine) runReplay(ph *Phase, r Replay) {
	ends := make([]*replyEnds, len(r.Sessions))
	for s, rs := range r.Sessions {
		ends[s] = newReplyEnds(len(rs.Delays))
	}
	var sessions sync.WaitGroup
	for s := range r.Sessions {
		sessions.Add(1)
		ph.requests.Go(func() {
			defer sessions.Done()
			defer ends[s].closeAll()
			e.replaySession(ph, r, s, ends)
		})
	}
	allDone := make(chan struct{})
	go func() { sessions.Wait(); close(allDone) }()
	select {
	case <-ph.issueCtx.Done():
	case <-allDone:
	}
}

// replaySession sends session s's calls, each once it is due, and notes
// when each reply ended for the sessions that wait on it. It stops when
// issuing stops, the request budget is spent, or the parent call it
// waits for was never sent.
func (e *Engine) replaySession(ph *Phase, r Replay, s int, ends []*replyEnds) {
	rs := r.Sessions[s]
	sess := e.session(uint64(s))
	var conv uint64 // the session's index in the run (prepareNext)
	var after time.Time
	for k, delay := range rs.Delays {
		due, ok := rs.Start, true
		switch {
		case k > 0:
			after, ok = joined(ph.issueCtx, after, rs, k, ends)
			due = after.Sub(e.start) + delay
		case rs.Parent >= 0:
			after, ok = ends[rs.Parent].wait(ph.issueCtx, rs.ParentCall)
			due = after.Sub(e.start) + delay
		}
		if !ok {
			return
		}
		// Indices are claimed once due, so a request budget below the
		// trace's calls sends the earliest ones; the render then counts
		// as queue delay (microseconds).
		if !e.clock.PaceUntil(ph.issueCtx, e.start.Add(due)) {
			return
		}
		i, ok := e.claim()
		if !ok {
			return
		}
		// A recorded call's prompt holds its context already: no
		// previous response id, so a stateful API is sent it whole.
		p, err := e.prepareNext(sess, rs.Group, i, "", &conv)
		if !e.admit(ph.issueCtx) {
			return
		}
		res := e.execute(e.reqCtx, i, p, err, arrival{open: true, due: due, lateAfter: r.LateAfter})
		res.SessionCalls = len(rs.Delays) // sessions differ in length: each record says its own
		after = e.clock.Now()
		ends[s].set(k, after)
		ph.out <- res
	}
}

// joined is the later of after (the previous reply's end) and the last
// replies of the subagents call k of rs joins, once they have all ended;
// false when one was never sent or issuing stopped first.
func joined(ctx context.Context, after time.Time, rs ReplaySession, k int, ends []*replyEnds) (time.Time, bool) {
	if k >= len(rs.Joins) {
		return after, true
	}
	for _, c := range rs.Joins[k] {
		end, ok := ends[c].wait(ctx, len(ends[c].at)-1)
		if !ok {
			return after, false
		}
		if end.After(after) {
			after = end
		}
	}
	return after, true
}

// replyEnds is when each reply of one session ended, for the sessions
// that wait on it: done[k] is closed once at[k] is set, or, for a call
// never sent, when the session ends (at[k] then stays zero).
type replyEnds struct {
	at   []time.Time
	done []chan struct{}
	once []sync.Once
}

func newReplyEnds(calls int) *replyEnds {
	r := &replyEnds{at: make([]time.Time, calls), done: make([]chan struct{}, calls), once: make([]sync.Once, calls)}
	for k := range r.done {
		r.done[k] = make(chan struct{})
	}
	return r
}

// set notes that call k's reply ended at t.
func (r *replyEnds) set(k int, t time.Time) {
	r.once[k].Do(func() { r.at[k] = t; close(r.done[k]) })
}

// closeAll releases the waiters of calls never sent.
func (r *replyEnds) closeAll() {
	for k := range r.done {
		r.once[k].Do(func() { close(r.done[k]) })
	}
}

// wait returns when call k's reply ended, false when it was never sent or
// issuing stopped first.
func (r *replyEnds) wait(ctx context.Context, k int) (time.Time, bool) {
	select {
	case <-r.done[k]:
		return r.at[k], !r.at[k].IsZero()
	case <-ctx.Done():
		return time.Time{}, false
	}
}
