package engine

import (
	"context"
	"sync"
	"time"

	"github.com/inferload/inferload/record"
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
// at due, and starts the goroutine that sends its later turns. It returns
// false when issuing stopped first.
func (e *Engine) openConversation(ph *Phase, o OpenLoop, sess workload.Session, user, i uint64, due time.Duration,
	slots chan struct{}, wg *sync.WaitGroup) bool {
	issueCtx := ph.issueCtx
	var conv uint64
	p, err := e.prepareNext(sess, user, i, "", &conv)
	if !e.clock.PaceUntil(issueCtx, e.start.Add(due)) {
		return false
	}
	if !e.admitWithSlot(issueCtx, slots) {
		return false
	}
	at := arrival{open: true, due: due, lateAfter: o.LateAfter}
	wg.Add(1)
	ph.requests.Go(func() {
		defer wg.Done()
		res := e.execute(e.reqCtx, i, p, err, at)
		release(slots)
		e.laterTurns(ph, o, sess, user, conv, p.spec, res, slots)
	})
	return true
}

// laterTurns sends a conversation's turns after the first, whose spec and
// record are given, each Think after the previous reply ended.
func (e *Engine) laterTurns(ph *Phase, o OpenLoop, sess workload.Session, user, conv uint64, last workload.Spec,
	res *record.Result, slots chan struct{}) {
	issueCtx := ph.issueCtx
	rng := newRNG(e.cfg.Seed, user)
	for !lastTurn(last) {
		prev := ""
		if res.Error == record.ErrNone {
			prev = res.ResponseID // as a closed-loop user: a failed turn's id is not continued
		}
		ph.out <- res // the collector owns res from here
		due := e.clock.Now()
		if o.Think != nil {
			due = due.Add(max(o.Think.Sample(rng), 0))
		}
		i, ok := e.claim()
		if !ok || !e.clock.SleepUntil(issueCtx, due) {
			return // the budget is spent, or issuing stopped: the conversation is cut
		}
		p, err := e.prepareNext(sess, user, i, prev, &conv)
		if !e.admitWithSlot(issueCtx, slots) {
			return
		}
		res = e.execute(e.reqCtx, i, p, err, arrival{open: true, due: due.Sub(e.start), lateAfter: never})
		release(slots)
		last = p.spec
	}
	ph.out <- res
}

// lastTurn reports whether spec ends its conversation (a single request
// ends its own).
func lastTurn(spec workload.Spec) bool {
	return spec.Turns == 0 || spec.Turn >= spec.Turns-1
}
