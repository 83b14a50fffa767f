package engine

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

// ClosedLoop is a closed-loop phase: Users virtual users, each sending a
// request, waiting for the whole reply, thinking, and sending again. The
// server's speed sets the rate; latency runs from each request's send.
type ClosedLoop struct {
	// Users is the number of users (at least 1).
	Users int
	// Think is a user's pause between a reply and its next request; nil
	// means none.
	Think ThinkTime
	// Active, when set, ramps the loop: of the Users users only the first
	// Active(elapsed) send; the others wait (their in-flight request
	// finishes first). Users is the most it may return.
	Active func(elapsed time.Duration) int

	// Ends, when set, holds one channel per user: user u closes Ends[u]
	// when it ends, its last request answered (issuing stopped while it
	// waited or thought: at once). A load change passes them on as the
	// next phase's After.
	Ends []chan struct{}
	// After, when set, holds user u (u < len(After)) until After[u] is
	// closed: the user of the previous phase whose place it takes has
	// ended (each must close: that phase's Grace bounds it). A load change then neither drains the server (the continuing
	// users send their next request as their last one is answered) nor
	// starts them all at once.
	After []<-chan struct{}
	// SpawnRate, when above 0, starts the users beyond After one at a
	// time, this many per second, the first at once (Locust's spawn
	// rate); 0 starts them together.
	SpawnRate float64
}

// Validate says what keeps the loop from running.
func (c ClosedLoop) Validate() error {
	if c.Users < 1 {
		return fmt.Errorf("engine: a closed loop needs at least 1 user, not %d", c.Users)
	}
	if len(c.Ends) != 0 && len(c.Ends) != c.Users {
		return fmt.Errorf("engine: a closed loop of %d users needs as many Ends, not %d", c.Users, len(c.Ends))
	}
	if !(c.SpawnRate >= 0) || math.IsInf(c.SpawnRate, 0) {
		return fmt.Errorf("engine: spawn rate %g: want a finite number of users per second, 0 or more", c.SpawnRate)
	}
	return nil
}

// Run sends the phase's requests from its users.
func (c ClosedLoop) Run(ph *Phase) { ph.e.runClosedLoop(ph, c) }

// runClosedLoop starts c.Users users; each sends a request, waits for
// the whole reply, thinks, and repeats until issuing stops. It returns when
// issuing has stopped (the users' last requests may still be in flight)
// or when every user has finished because the request budget is spent.
// Once the budget is all issued, the last requests get Grace to finish,
// as at the end of a duration, and are canceled after it: a server that
// stalls them cannot hold the phase until their own timeouts. The users
// are counted in ph.requests.
func (e *Engine) runClosedLoop(ph *Phase, c ClosedLoop) {
	var active atomic.Int64
	active.Store(int64(c.Users))
	allDone := make(chan struct{})
	for u := range c.Users {
		ph.requests.Go(func() {
			defer func() {
				if c.Ends != nil {
					// A user that never started (the phase stopped before
					// its predecessor ended) ends with its predecessor,
					// so the next phase's user never runs beside it.
					if u < len(c.After) {
						<-c.After[u]
					}
					close(c.Ends[u])
				}
				if active.Add(-1) == 0 {
					close(allDone)
				}
			}()
			if e.awaitJoin(ph.issueCtx, c, u) {
				e.user(ph, c, uint64(u))
			}
		})
	}
	select {
	case <-ph.issueCtx.Done():
	case <-allDone:
	case <-e.allIssued:
		e.graceForTheLast(ph.issueCtx, allDone)
	}
}

// graceForTheLast gives the requests in flight once the request budget is
// all issued Grace to finish, then cancels them, and waits for the users
// to end (or issuing to be stopped: Run's own drain then follows).
func (e *Engine) graceForTheLast(issueCtx context.Context, allDone <-chan struct{}) {
	wait, cancel := context.WithCancel(issueCtx)
	defer cancel()
	go func() {
		select {
		case <-allDone:
			cancel()
		case <-wait.Done():
		}
	}()
	if e.clock.SleepUntil(wait, e.clock.Now().Add(e.cfg.Grace)) {
		e.abortReqs()
	}
	select {
	case <-issueCtx.Done():
	case <-allDone:
	}
}

// user is one closed-loop virtual user. A conversation's turns are sent
// as a graph of requests (graph_requests.go), the user's think time
// between them; every request, a turn's too, is sent as sendClosed says.
func (e *Engine) user(ph *Phase, c ClosedLoop, id uint64) {
	issueCtx := ph.issueCtx
	u := &closedUser{loop: c, id: id}
	rng := newRNG(e.cfg.Seed, id)
	sess := e.session(id)
	var conv uint64 // the user's current conversation (prepareNext)
	for issueCtx.Err() == nil {
		a, ok := e.nextClosed(issueCtx, u, sess, "", &conv)
		if !ok {
			return
		}
		if a.p.spec.Turns > 1 {
			first := a // escapes with the task; a, on every request's path, does not
			rt := &requestTask{ph: ph, user: id, streams: []taskStream{{sess: sess, conv: conv}}, first: &first, closed: u, rng: rng}
			e.runRequests(conversationGraph(a.p.spec.Turns, c.Think), rt)
		} else if !e.sendClosed(ph, u, a) {
			return
		}
		if c.Think == nil {
			continue
		}
		if d := c.Think.Sample(rng); d > 0 && !e.clock.SleepUntil(issueCtx, e.clock.Now().Add(d)) {
			return
		}
	}
}

// closedUser is what a closed-loop user carries from one request to the
// next.
type closedUser struct {
	loop ClosedLoop
	id   uint64
	// later is how long the next request waits, after its index is
	// claimed (retryLater); localWait is the back-off after failures for
	// a local resource (backOffLocal).
	later, localWait time.Duration
}

// nextClosed readies user u's next request: once the ramp lets it send,
// it claims an index, waits what the last reply asked (later), renders
// the request from the user's session (prev and conv as prepareNext
// takes them) and admits it. It returns false when issuing stopped or
// the request budget is spent.
func (e *Engine) nextClosed(issueCtx context.Context, u *closedUser, sess workload.Session, prev string, conv *uint64) (admitted, bool) {
	if !e.awaitActive(issueCtx, u.loop.Active, u.id) {
		return admitted{}, false
	}
	i, ok := e.claim()
	if !ok {
		return admitted{}, false
	}
	// After the index is claimed, so that a run whose requests are
	// all sent does not wait for a request it will never make.
	if u.later > 0 && !e.clock.SleepUntil(issueCtx, e.clock.Now().Add(u.later)) {
		return admitted{}, false // the index is unused: issuing stopped during the wait
	}
	p, err := e.prepareNext(sess, u.id, i, prev, conv)
	if !e.admit(issueCtx) {
		return admitted{}, false // the index is unused: issuing stopped while rendering
	}
	return admitted{i: i, p: p, err: err}, true
}

// sendClosed sends user u's admitted request a and hands its record
// over. It returns false when issuing stopped during a back-off.
func (e *Engine) sendClosed(ph *Phase, u *closedUser, a admitted) bool {
	return e.handOver(ph, u, e.execute(e.reqCtx, a.i, a.p, a.err, arrival{}))
}

// handOver gives res to the collector. For closed-loop user u's request
// it first notes how long the user's next request waits (retryLater) and
// then backs off a failure for a local resource; it returns false when
// issuing stopped during the back-off. u is nil for an open loop's.
func (e *Engine) handOver(ph *Phase, u *closedUser, res *record.Result) bool {
	if u == nil {
		ph.out <- res
		return true
	}
	// Read before the collector owns res.
	local := res.Error == record.ErrClientResource
	u.later = e.retryLater(res)
	ph.out <- res
	return e.backOffLocal(ph.issueCtx, local, &u.localWait)
}

// awaitJoin holds user u until its turn to start: until the user of the
// previous phase it takes over from has ended (c.After), or, for a user
// the load change adds, until its slot at c.SpawnRate: the k-th added
// user starts k/SpawnRate seconds into the phase. It returns false when
// issuing stops first.
func (e *Engine) awaitJoin(issueCtx context.Context, c ClosedLoop, u int) bool {
	if u < len(c.After) {
		select {
		case <-c.After[u]:
			return issueCtx.Err() == nil
		case <-issueCtx.Done():
			return false
		}
	}
	k := u - len(c.After)
	if c.SpawnRate <= 0 || k == 0 {
		return true
	}
	at := e.start.Add(time.Duration(float64(k) / c.SpawnRate * float64(time.Second)))
	return e.clock.SleepUntil(issueCtx, at)
}

// rampPoll is how often a user outside a ramp's current target checks
// again: fine enough that a ramp over seconds looks linear, coarse enough
// that idle users cost nothing.
const rampPoll = 5 * time.Millisecond

// awaitActive blocks user id while a ramp (active) has fewer users active
// than id+1. It returns false when issuing stops first.
func (e *Engine) awaitActive(issueCtx context.Context, active func(time.Duration) int, id uint64) bool {
	if active == nil {
		return true
	}
	for {
		now := e.clock.Now()
		if uint64(max(active(now.Sub(e.start)), 0)) > id {
			return true
		}
		if !e.clock.SleepUntil(issueCtx, now.Add(rampPoll)) {
			return false
		}
	}
}

// Backoff of a closed-loop user whose request failed for lack of a local
// resource (record.ErrClientResource: no file descriptor, no port): retrying
// at once would spin and fill the records with the same failure.
const (
	localBackoffMin = 50 * time.Millisecond
	localBackoffMax = time.Second
)

// backOffLocal waits after a client_resource failure, doubling from
// localBackoffMin to localBackoffMax while they last, and resets after any
// other outcome. It returns false when issuing stops during the wait.
func (e *Engine) backOffLocal(issueCtx context.Context, local bool, wait *time.Duration) bool {
	if !local {
		*wait = 0
		return true
	}
	*wait = min(max(2**wait, localBackoffMin), localBackoffMax)
	return e.clock.SleepUntil(issueCtx, e.clock.Now().Add(*wait))
}

// retryLater is how long a closed-loop user waits before its next request
// after res: when retrying gave up because the server asked, in
// Retry-After, for longer than MaxRetryAfter, the user waits
// MaxRetryAfter (the Retry-After capped) rather than sending its next
// request at once. Otherwise a server answering every request with 429
// and Retry-After: 3600 met a storm: 2 users sent 25,234 requests in 4 s.
func (e *Engine) retryLater(res *record.Result) time.Duration {
	if res.RetryStop != record.RetryStopRetryAfter {
		return 0
	}
	return e.retry.MaxRetryAfter
}
