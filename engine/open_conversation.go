package engine

import (
	"context"
	"sync"
	"time"

	"github.com/inferload/inferload/workload"
)

// Conversations under an open loop (AIPerf's user-centric rate): each
// arrival starts a conversation (a single request when the class drawn has
// one turn), and the conversation's turn k+1 is due Think after turn k's
// reply ended, not at a later arrival, so a turn never overtakes its
// predecessor's reply. The arrival rate therefore counts conversations
// started; the requests' rate follows from the turns and the server's
// speed.
//
// A later turn keeps the open loop's latency origin, its due time (so an
// in-flight cap or a slow client shows as queue delay), but is never late:
// its due time is the server's doing, not the schedule's, and lateness
// judges the schedule (the pacer) alone.

// conversations tracks an open loop's conversations.
type conversations struct {
	n  uint64         // conversations started: the next one's user
	wg sync.WaitGroup // conversations whose later turns may still be sent
}

// start returns the session of the next conversation, nil when the
// source holds none (every arrival is then Spec(i)).
func (c *conversations) start(e *Engine) workload.Session {
	sess := e.session(c.n)
	if sess != nil {
		c.n++
	}
	return sess
}

// finish holds the open loop, once its arrivals are over, until its
// conversations have sent their later turns: a request budget spent by
// the arrivals' claims still has turns to come. Once the budget is all
// issued the last requests get Grace, as a closed loop's do.
func (c *conversations) finish(e *Engine, issueCtx context.Context) {
	if c.n == 0 {
		return
	}
	done := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(done)
	}()
	select {
	case <-issueCtx.Done():
	case <-done:
	case <-e.allIssued:
		e.graceForTheLast(issueCtx, done)
	}
}

// openConversation sends the first turn of conversation user, request i,
// at due, then its later turns (a graph of requests: conversationGraph).
// It returns false when issuing stopped first.
func (e *Engine) openConversation(ph *Phase, o OpenLoop, sess workload.Session, user, i uint64, due time.Duration,
	slots chan struct{}, wg *sync.WaitGroup) bool {
	issueCtx := ph.issueCtx
	rt := &requestTask{ph: ph, slots: slots, due: due, lateAfter: o.LateAfter, user: user,
		streams: []taskStream{{sess: sess}}, rng: newRNG(e.cfg.Seed, user)}
	p, err := e.prepareNext(sess, user, i, "", &rt.streams[0].conv)
	if !e.clock.PaceUntil(issueCtx, e.start.Add(due)) {
		return false
	}
	if !e.admitWithSlot(issueCtx, slots) {
		return false
	}
	rt.first = &admitted{i: i, p: p, err: err}
	wg.Add(1)
	ph.requests.Go(func() {
		defer wg.Done()
		e.runRequests(conversationGraph(p.spec.Turns, o.Think), rt)
	})
	return true
}
