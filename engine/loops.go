package engine

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferload/inferload/record"
)

// runClosedLoop starts Concurrency users; each sends a request, waits for
// the whole reply, thinks, and repeats until issuing stops. It returns when
// issuing has stopped (the users' last requests may still be in flight)
// or when every user has finished because the request budget is spent.
// Once the budget is all issued, the last requests get Grace to finish,
// as at the end of a duration, and are canceled after it: a server that
// stalls them cannot hold the phase until their own timeouts. The users
// are counted in wg.
func (e *Engine) runClosedLoop(issueCtx, reqCtx context.Context, out chan<- *record.Result, wg *sync.WaitGroup) {
	var active atomic.Int64
	active.Store(int64(e.cfg.Concurrency))
	allDone := make(chan struct{})
	for u := range e.cfg.Concurrency {
		wg.Go(func() {
			defer func() {
				if active.Add(-1) == 0 {
					close(allDone)
				}
			}()
			e.user(issueCtx, reqCtx, uint64(u), out)
		})
	}
	select {
	case <-issueCtx.Done():
	case <-allDone:
	case <-e.allIssued:
		e.graceForTheLast(issueCtx, allDone)
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

// user is one closed-loop virtual user.
func (e *Engine) user(issueCtx, reqCtx context.Context, id uint64, out chan<- *record.Result) {
	rng := newRNG(e.cfg.Seed, id)
	sess := e.session(id)
	var localWait, later time.Duration
	for issueCtx.Err() == nil {
		if !e.awaitActive(issueCtx, id) {
			return
		}
		i, ok := e.claim()
		if !ok {
			return
		}
		// After the index is claimed, so that a run whose requests are
		// all sent does not wait for a request it will never make.
		if later > 0 && !e.clock.SleepUntil(issueCtx, e.clock.Now().Add(later)) {
			return // the index is unused: issuing stopped during the wait
		}
		p, err := e.prepareNext(sess, i)
		if !e.admit(issueCtx) {
			return // the index is unused: issuing stopped while rendering
		}
		res := e.execute(reqCtx, i, p, err, 0, false)
		// Read before the collector owns res.
		local := res.Error == record.ErrClientResource
		later = e.retryLater(res)
		out <- res
		if !e.backOffLocal(issueCtx, local, &localWait) {
			return
		}
		if e.cfg.Think == nil {
			continue
		}
		if d := e.cfg.Think.Sample(rng); d > 0 && !e.clock.SleepUntil(issueCtx, e.clock.Now().Add(d)) {
			return
		}
	}
}

// rampPoll is how often a user outside a ramp's current target checks
// again: fine enough that a ramp over seconds looks linear, coarse enough
// that idle users cost nothing.
const rampPoll = 5 * time.Millisecond

// awaitActive blocks user id while a ramp has fewer users active than id+1.
// It returns false when issuing stops first.
func (e *Engine) awaitActive(issueCtx context.Context, id uint64) bool {
	if e.cfg.Users == nil {
		return true
	}
	for {
		now := e.clock.Now()
		if uint64(max(e.cfg.Users(now.Sub(e.start)), 0)) > id {
			return true
		}
		if !e.clock.SleepUntil(issueCtx, now.Add(rampPoll)) {
			return false
		}
	}
}

// never is the offset an Arrivals returns when no request will ever be
// due again (schedule.TraceEnd).
const never = time.Duration(math.MaxInt64)

// runOpenLoop issues requests at their intended offsets, whatever the
// server's speed. The schedule is absolute (offsets from the start), so a
// late wake-up never shifts later arrivals: the lag shows up as queue delay
// instead of silently lowering the offered load. The requests are counted
// in wg.
func (e *Engine) runOpenLoop(issueCtx, reqCtx context.Context, out chan<- *record.Result, wg *sync.WaitGroup) {
	var slots chan struct{}
	if e.cfg.MaxInFlight > 0 {
		slots = make(chan struct{}, e.cfg.MaxInFlight)
	}
	for {
		i, ok := e.claim()
		if !ok {
			return // the request budget is spent
		}
		due := e.cfg.Arrivals.Next()
		if due == never || (e.cfg.Duration > 0 && due >= e.cfg.Duration) {
			e.idleUntilStop(issueCtx)
			return
		}
		p, err := e.prepare(i)
		if !e.clock.PaceUntil(issueCtx, e.start.Add(due)) {
			return
		}
		if slots != nil && !acquire(issueCtx, slots) {
			return
		}
		if !e.admit(issueCtx) {
			if slots != nil {
				<-slots
			}
			return
		}
		wg.Go(func() {
			if slots != nil {
				defer func() { <-slots }()
			}
			out <- e.execute(reqCtx, i, p, err, due, true)
		})
	}
}

// idleUntilStop is what an open loop does once its schedule has nothing
// more due within the phase (a trace played once, or the next arrival of
// a sparse rate beyond Duration): with a Duration the phase still lasts
// it, issuing nothing, so the window is the configured one; without one
// (a trace played once) the phase ends now, at its last request.
func (e *Engine) idleUntilStop(issueCtx context.Context) {
	if e.cfg.Duration > 0 {
		<-issueCtx.Done()
	}
}

// acquire takes an in-flight slot, or gives up when issuing stops.
func acquire(ctx context.Context, slots chan struct{}) bool {
	select {
	case slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
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
