package schedule

import (
	"math"
	"time"
)

// TraceSession is one recorded session of an agent trace: an agent's (or
// a subagent's) calls, each sent once the reply before it ended and the
// recorded delay passed, so the replay keeps the session's order and
// think times whatever the server's speed.
type TraceSession struct {
	// ID is the session's id in the trace.
	ID string
	// Calls are the session's entries (indices for Trace.Entry), in
	// recorded order.
	Calls []int
	// Parent is the session that spawned this one (a subagent's), -1 for
	// none. ParentCall is the parent's call (an index into its Calls)
	// whose reply this session's first call waits for: the parent's last
	// call to end before this session started. It is -1, and the session
	// starts at its first entry's At like a root, when the parent is
	// unknown, started later, or had no call ended by then.
	Parent, ParentCall int
	// Root is the top of the session's parent chain (itself without a
	// parent): the sessions under one root are one recorded task, which
	// a client over replicas keeps on one of them.
	Root int
	// Joins lists, per call, the subagent sessions whose last reply the
	// call waits for besides the reply before it: the subagents that
	// ended, as recorded, before it started and after the previous call
	// did (a parent resumes once its subagents have answered). nil when
	// no call joins one.
	Joins [][]int
}

// Sessions returns an agent trace's sessions in the order their first
// calls were recorded; nil for formats without sessions.
func (t *Trace) Sessions() []TraceSession { return t.sessions }

// buildSessions groups rows (sorted by start, entries[i] scaled from
// rows[i]) into sessions and sets each entry's Session, Turn and Delay.
// A session may start after a call of a session listed before it only (its
// parent), and a call may join only a subagent spawned by an earlier call
// of its session, so the waits have no cycle and a replay cannot deadlock
// however the trace links sessions.
func buildSessions(rows []traceRow, entries []TraceEntry, speed float64, maxGap time.Duration) []TraceSession {
	var sessions []TraceSession
	index := make(map[string]int)
	for i, r := range rows {
		s, ok := index[r.session]
		if !ok {
			s = len(sessions)
			index[r.session] = s
			sessions = append(sessions, TraceSession{ID: r.session, Parent: -1, ParentCall: -1, Root: s})
		}
		ss := &sessions[s]
		e := &entries[i]
		e.Session, e.Turn = s, len(ss.Calls)
		if e.Turn > 0 {
			e.Delay = replayGap(r.ns-rows[ss.Calls[e.Turn-1]].end, speed, maxGap)
		}
		ss.Calls = append(ss.Calls, i)
	}
	for s := range sessions {
		linkParent(sessions, s, index, rows, entries, speed, maxGap)
	}
	for c := range sessions {
		joinParent(sessions, c, rows, entries, speed, maxGap)
	}
	return sessions
}

// joinParent makes the first of the parent's calls after subagent c's
// spawn that started once c's last reply had ended wait for that reply
// too, its delay then counted from the later of the two ends.
func joinParent(sessions []TraceSession, c int, rows []traceRow, entries []TraceEntry, speed float64, maxGap time.Duration) {
	cs := &sessions[c]
	if cs.Parent < 0 {
		return
	}
	ps := &sessions[cs.Parent]
	end := rows[cs.Calls[len(cs.Calls)-1]].end
	// Not the parent's first call: a root's first call is due at its
	// start, whatever else ran.
	for k := max(cs.ParentCall+1, 1); k < len(ps.Calls); k++ {
		call := ps.Calls[k]
		if rows[call].ns < end {
			continue
		}
		if ps.Joins == nil {
			ps.Joins = make([][]int, len(ps.Calls))
		}
		ps.Joins[k] = append(ps.Joins[k], c)
		end = max(end, rows[ps.Calls[k-1]].end)
		entries[call].Delay = min(entries[call].Delay, replayGap(rows[call].ns-end, speed, maxGap))
		return
	}
}

// linkParent links session s to the parent its first call names, when
// that parent is listed before it, and sets the delay of its first call
// after the parent call it waits for.
func linkParent(sessions []TraceSession, s int, index map[string]int, rows []traceRow, entries []TraceEntry, speed float64, maxGap time.Duration) {
	ss := &sessions[s]
	first := ss.Calls[0]
	p, ok := index[rows[first].parent]
	if !ok || p >= s {
		return
	}
	ss.Parent, ss.Root = p, sessions[p].Root
	for k, c := range sessions[p].Calls {
		if rows[c].end <= rows[first].ns {
			ss.ParentCall = k
		}
	}
	if ss.ParentCall >= 0 {
		end := rows[sessions[p].Calls[ss.ParentCall]].end
		entries[first].Delay = replayGap(rows[first].ns-end, speed, maxGap)
	}
}

// replayGap is a recorded gap of ns nanoseconds as replayed: at least 0
// (calls that overlapped in the trace go one after the other), divided
// by speed, cut to maxGap when that is above 0.
func replayGap(ns int64, speed float64, maxGap time.Duration) time.Duration {
	d := time.Duration(math.Round(float64(max(ns, 0)) / speed))
	if maxGap > 0 {
		d = min(d, maxGap)
	}
	return d
}
