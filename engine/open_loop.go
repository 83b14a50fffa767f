package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// OpenLoop is an open-loop phase: requests due at the offsets Arrivals
// yields, sent on time whatever the server's speed. A request's latency
// runs from when it was due, so a slow client or a full in-flight cap
// shows as queue delay, never as a lower offered load.
type OpenLoop struct {
	// Arrivals is the schedule (required).
	Arrivals Arrivals
	// MaxInFlight caps concurrent requests; 0 means no cap. Requests that
	// wait for a slot accumulate queue delay.
	MaxInFlight int
	// LateAfter marks a request late when its start lagged the intended
	// time by more than this.
	LateAfter time.Duration
	// Think is a conversation's pause between a turn's reply and its
	// next turn, when the source holds conversations (each arrival then
	// starts one: openConversation); nil means none.
	Think ThinkTime
}

// Validate says what keeps the loop from running.
func (o OpenLoop) Validate() error {
	var errs []error
	if o.Arrivals == nil {
		errs = append(errs, errors.New("engine: an open loop needs Arrivals"))
	}
	if o.MaxInFlight < 0 {
		errs = append(errs, fmt.Errorf("engine: MaxInFlight %d: counts and durations must not be negative", o.MaxInFlight))
	}
	return errors.Join(errs...)
}

// Run sends the phase's requests as they fall due.
func (o OpenLoop) Run(ph *Phase) { ph.e.runOpenLoop(ph, o) }

// never is the offset an Arrivals returns when no request will ever be
// due again (schedule.TraceEnd).
const never = time.Duration(math.MaxInt64)

// runOpenLoop issues requests at their intended offsets, whatever the
// server's speed. The schedule is absolute (offsets from the start), so a
// late wake-up never shifts later arrivals: the lag shows up as queue delay
// instead of silently lowering the offered load. The requests are counted
// in ph.requests.
func (e *Engine) runOpenLoop(ph *Phase, o OpenLoop) {
	issueCtx := ph.issueCtx
	var slots chan struct{}
	if o.MaxInFlight > 0 {
		slots = make(chan struct{}, o.MaxInFlight)
	}
	var convs conversations
	defer convs.finish(e, issueCtx)
	for {
		i, ok := e.claim()
		if !ok {
			return // the request budget is spent
		}
		due := o.Arrivals.Next()
		if due == never || (e.cfg.Duration > 0 && due >= e.cfg.Duration) {
			e.idleUntilStop(issueCtx)
			return
		}
		if sess := convs.start(e); sess != nil {
			if !e.openConversation(ph, o, sess, convs.n-1, i, due, slots, &convs.wg) {
				return
			}
			continue
		}
		p, err := e.prepare(i)
		if !e.clock.PaceUntil(issueCtx, e.start.Add(due)) {
			return
		}
		if !e.admitWithSlot(issueCtx, slots) {
			return
		}
		at := arrival{open: true, due: due, lateAfter: o.LateAfter}
		ph.requests.Go(func() {
			defer release(slots)
			ph.out <- e.execute(e.reqCtx, i, p, err, at)
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

// admitWithSlot takes an in-flight slot when the loop is capped (slots
// non-nil), then admits the request. When issuing stops first it gives
// the slot back and reports false, so a stopped loop holds no slot.
func (e *Engine) admitWithSlot(issueCtx context.Context, slots chan struct{}) bool {
	if slots != nil && !acquire(issueCtx, slots) {
		return false
	}
	if !e.admit(issueCtx) {
		release(slots)
		return false
	}
	return true
}

// release gives back an in-flight slot taken by admitWithSlot; an
// uncapped loop (nil slots) took none.
func release(slots chan struct{}) {
	if slots != nil {
		<-slots
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
