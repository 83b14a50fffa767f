package engine

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

// This file: graphs of requests. A conversation (a line of turns, each a
// think time after the reply before it) and a replayed agent task
// (sessions of calls, subagents spawned by a call, a call that joins its
// subagents' last replies, each call a recorded delay after the replies
// it waits for) are graphs whose nodes are requests of the run's own:
// each call claims its own index once it is due, is built by its
// session's stream (prepareNext: the history with the server's replies,
// or the recorded blocks), may be retried, and yields its own record,
// with its turn and session. They run on the executor that runs a
// class's graph (runGraph); only how a call is sent differs from a graph
// task's calls, which fold into one record.
//
// A call's due time is its node's Delay after the last reply it comes
// after ended; a root's is the task's (an arrival, a recorded start).
// Only a root can be late: a later call's due time is the server's
// doing, and lateness judges the schedule. Roots are paced precisely,
// later calls wait as a user's think time does. Once a call goes unsent
// (issuing stopped, the request budget is spent) no later call starts.

// requestTask is what a graph of requests needs beside its graph.
type requestTask struct {
	ph    *Phase
	slots chan struct{} // the loop's in-flight cap; nil: none
	// due is when the roots are due, from the phase start; a root that
	// starts more than lateAfter after it is late.
	due, lateAfter time.Duration
	// user keys the calls' affinity (prepareNext): a conversation's
	// user, a replayed task's group.
	user    uint64
	streams []taskStream
	// first, when set, is a root call the loop already claimed,
	// rendered and admitted at its due time (an open loop's arrival, a
	// closed-loop user's next request).
	first *admitted
	// closed, for a closed-loop user's conversation, is the user: its
	// calls are closed-loop requests (latency from the send, no due
	// time), readied and handed over as the user's others are.
	closed *closedUser
	// rng draws the nodes' delays in the order the calls fall due; mu
	// guards it, as calls of one task may fall due together.
	mu  sync.Mutex
	rng *rand.Rand
}

// taskStream is one session stream of a task, with what its next call
// continues.
type taskStream struct {
	sess workload.Session
	conv uint64 // the session's index in the run (prepareNext)
	prev string // the id of its last good reply
	// calls, when above 0, is the session's calls, said by each record
	// (a replayed session's, which its specs do not carry).
	calls int
}

// admitted is a call claimed, rendered and admitted ahead of its task.
type admitted struct {
	i   uint64
	p   prepared
	err error
}

// requestCall sends call c of a graph of requests once it is due.
func (e *Engine) requestCall(run *graphRun, c int) {
	rt := run.requests
	call := &run.calls[c]
	call.state = callRan
	st := &rt.streams[run.g.Nodes[call.node].Stream]
	a, at, ok := e.dueCall(run, call.node, st)
	if !ok {
		return
	}
	res := e.execute(e.reqCtx, a.i, a.p, a.err, at)
	release(rt.slots)
	st.prev = ""
	if res.Error == record.ErrNone {
		st.prev = res.ResponseID // a failed turn's id is not continued: the history goes again
	}
	if st.calls > 0 {
		res.SessionCalls = st.calls
	}
	end := e.clock.Now() // before the hand-over, which may wait for the collector
	if !e.handOver(rt.ph, rt.closed, res) {
		return
	}
	if rt.closed != nil {
		end = e.clock.Now() // a closed-loop user thinks after its hand-over and back-off, as between its other requests
	}
	call.end = end
}

// dueCall waits until node n's call is due and readies its request from
// stream st: claimed, rendered and admitted, as a closed-loop user's
// next request (nextClosed) or an open loop's. It returns false when
// issuing stopped or the request budget is spent first.
func (e *Engine) dueCall(run *graphRun, n int, st *taskStream) (*admitted, arrival, bool) {
	rt := run.requests
	node := &run.g.Nodes[n]
	issueCtx := rt.ph.issueCtx
	at := arrival{open: rt.closed == nil, due: rt.due, lateAfter: rt.lateAfter}
	if len(node.After) == 0 {
		if a := rt.first; a != nil {
			rt.first = nil
			return a, at, true
		}
		if !e.clock.PaceUntil(issueCtx, e.start.Add(at.due)) {
			return nil, at, false
		}
	} else {
		due := run.lastEnd(n)
		if node.Delay != nil {
			due = due.Add(rt.delay(node.Delay))
		}
		at.due, at.lateAfter = due.Sub(e.start), never
		if !e.clock.SleepUntil(issueCtx, due) {
			return nil, at, false
		}
	}
	if rt.closed != nil {
		a, ok := e.nextClosed(issueCtx, rt.closed, st.sess, st.prev, &st.conv)
		return &a, arrival{}, ok
	}
	i, ok := e.claim()
	if !ok {
		return nil, at, false
	}
	p, err := e.prepareNext(st.sess, rt.user, i, st.prev, &st.conv)
	if !e.admitWithSlot(issueCtx, rt.slots) {
		return nil, at, false
	}
	return &admitted{i: i, p: p, err: err}, at, true
}

// delay draws a node's delay, never below 0.
func (rt *requestTask) delay(d ThinkTime) time.Duration {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return max(d.Sample(rt.rng), 0)
}

// lastEnd is when the last reply node n comes after ended.
func (run *graphRun) lastEnd(n int) time.Time {
	var last time.Time
	for _, u := range run.g.Nodes[n].After {
		for c := range run.g.Nodes[u].copies() {
			if end := run.calls[run.g.first[u]+c].end; end.After(last) {
				last = end
			}
		}
	}
	return last
}

// runRequests runs graph g as a graph of requests: its calls are sent
// as rt says, each yielding its record.
func (e *Engine) runRequests(g *graphPlan, rt *requestTask) {
	e.runGraph(e.reqCtx, &graphRun{g: g, calls: make([]graphCall, g.calls), requests: rt})
}

// conversationGraph is a conversation of turns as a graph of requests:
// each turn after the one before, a think time after its reply.
func conversationGraph(turns int, think ThinkTime) *graphPlan {
	g := &Graph{Nodes: make([]Node, max(turns, 1))}
	for k := 1; k < len(g.Nodes); k++ {
		g.Nodes[k].After, g.Nodes[k].Delay = []int{k - 1}, think
	}
	return g.plan()
}
