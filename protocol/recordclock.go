package protocol

import (
	"sync"
	"time"

	"github.com/inferload/inferload/record"
)

// recordClock keeps one record on one clock (docs/metrics.md#two-clocks-for-arrivals).
//
// The rule, written only here: a record's first token, its content events
// and its end are all on the kernel clock when every one of those
// arrivals carried a kernel receive stamp that is fresh (not before the
// request was sent) and in order (not before the arrival stamped before
// it); otherwise all of them are on the user-space clock (the instant each
// read returned). An end without a stamp of its own (a failure, a
// timeout) is such a missing stamp.
//
// Mixing the two is what made negative E2E: a stale kernel stamp on
// [DONE] (a read that carried none leaves the connection's last one, from
// the previous reply) ended a record 4 ms before it was sent, while its
// tokens, refused the same stale stamp one by one, stood on the user
// clock. Deciding once per record, every latency of a record is a
// difference of instants on one clock, each at or after the send and the
// one before it, so none can be negative and the offsets never go back.
//
// While the record is on the kernel clock the user-space instant of each
// arrival it keeps is noted too, so a missing stamp late in the stream
// turns the whole record over without losing anything; only the gaps of
// a reply past record.MaxEventsKept that were already folded into its
// tail keep the kernel clock's value.
type recordClock struct {
	started   bool          // an arrival has been noted
	user      bool          // the record is on the user-space clock
	last      time.Time     // the latest arrival, on the record's clock
	lastUser  time.Time     // the latest arrival on the user-space clock
	lag       time.Duration // the longest read lag of the content events
	firstUser time.Time     // Trace.FirstToken on the user-space clock
	endKernel time.Time     // Trace.End when a kernel arrival set it
	endUser   time.Time     // that end on the user-space clock
	tailUser  int64         // Trace.Tail.LastUS on the user-space clock
	userUS    *[]int64      // the kept events' offsets on the user-space clock
}

// userOffsets holds the user-space offsets of a kernel-clock record's
// events between requests; a buffer grown past maxPooledUserUS for one
// long reply is dropped rather than kept.
var userOffsets = sync.Pool{New: func() any { return new([]int64) }}

const maxPooledUserUS = 4096

// take places arrival a on the record's clock, turning the record over to
// the user-space clock first when a is not a fresh kernel stamp in order.
// It returns the instant on the record's clock and on the user-space one.
func (rc *recordClock) take(t *Trace, a arrival) (at, user time.Time) {
	// A read's user-space instant is when it returned; a is either that
	// (lag 0) or its kernel stamp, lag before it.
	user = a.at.Add(a.lag)
	// Reads return after the request was written and after the read
	// before them; the floor keeps that true whatever the caller passed.
	user = later(later(user, t.Sent), rc.lastUser)
	rc.lastUser = user
	if !rc.started {
		rc.started = true
		rc.last = t.Sent
	}
	if !rc.user && a.kernel && !a.at.Before(t.Sent) && !a.at.Before(rc.last) {
		rc.last = a.at
		return a.at, user
	}
	rc.toUser(t)
	rc.last = user
	return user, user
}

// event notes a content event that arrived at a: the first is the
// trace's first token. It returns the event's instant on the record's
// clock.
func (rc *recordClock) event(t *Trace, a arrival) time.Time {
	at, user := rc.take(t, a)
	if t.ContentEvents == 0 {
		t.FirstToken, rc.firstUser = at, user
	}
	if !rc.user {
		rc.lag = max(rc.lag, a.lag)
	}
	kept := len(t.EventsUS)
	t.EventsUS = record.AddEvent(t.EventsUS, &t.Tail, at.Sub(t.Sent).Microseconds())
	if rc.user {
		return at
	}
	userUS := user.Sub(t.Sent).Microseconds()
	if len(t.EventsUS) == kept {
		rc.tailUser = userUS
		return at
	}
	if rc.userUS == nil {
		rc.userUS = userOffsets.Get().(*[]int64)
		*rc.userUS = (*rc.userUS)[:0]
	}
	*rc.userUS = append(*rc.userUS, userUS)
	return at
}

// first notes the arrival of a whole reply that is the trace's first
// token without being a content event (embeddings, tensors, images).
func (rc *recordClock) first(t *Trace, a arrival) {
	t.FirstToken, rc.firstUser = rc.take(t, a)
}

// end notes the arrival that ended the reply: its end marker, or its
// last bytes.
func (rc *recordClock) end(t *Trace, a arrival) {
	at, user := rc.take(t, a)
	t.End, rc.endUser = at, user
	if !rc.user {
		rc.endKernel = at
	}
}

// toUser turns what the trace holds so far over to the user-space clock.
func (rc *recordClock) toUser(t *Trace) {
	if rc.user {
		return
	}
	rc.user, rc.lag = true, 0
	if !t.FirstToken.IsZero() {
		t.FirstToken = rc.firstUser
	}
	if rc.userUS != nil {
		copy(t.EventsUS, *rc.userUS)
	}
	if t.Tail.Dropped > 0 {
		t.Tail.LastUS = rc.tailUser
	}
	if !rc.endKernel.IsZero() && t.End.Equal(rc.endKernel) {
		t.End = rc.endUser
	}
}

// settle decides the record's clock once the request is over: an end
// that no kernel arrival set (a failure's instant, a timeout's) has no
// stamp, so the record is on the user-space clock. It sets Trace.Clock
// and Trace.ReadLag and gives back the pooled offsets.
func (rc *recordClock) settle(t *Trace) {
	if rc.started && !rc.user && (rc.endKernel.IsZero() || !t.End.Equal(rc.endKernel)) {
		rc.toUser(t)
	}
	if t.ContentEvents > 0 {
		t.Clock, t.ReadLag = ClockUser, 0
		if !rc.user {
			t.Clock, t.ReadLag = ClockKernel, rc.lag
		}
	}
	if p := rc.userUS; p != nil {
		rc.userUS = nil
		if cap(*p) <= maxPooledUserUS {
			userOffsets.Put(p)
		}
	}
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
