package engine

import (
	"context"
	"time"
)

// Clock is the engine's notion of time: what time it is, and waiting until
// a moment. Every offset the engine records is read through Now, and every
// wait goes through SleepUntil or PaceUntil, so a test can run a phase on
// simulated time (testing/synctest with TimerClock).
//
// A Clock changes how the engine waits, never what time it is: the
// protocol clients stamp their traces with time.Now, so Now must read the
// same clock as time.Now (monotonic reading included).
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// SleepUntil blocks until deadline or until ctx is done, and reports
	// whether deadline came with ctx still live. A deadline already past
	// returns at once. The engine uses it for every wait that need not be
	// exact (think time, ramps, retry backoff, the duration and the grace),
	// so it must cost nothing while it waits: closed-loop users wait in it
	// by the thousand.
	SleepUntil(ctx context.Context, deadline time.Time) bool
	// PaceUntil is SleepUntil for the open loop's single dispatcher, which
	// must wake on time: how late it wakes is every request's queue delay.
	// It may spend CPU to be exact, but must never return before deadline
	// when it reports true.
	PaceUntil(ctx context.Context, deadline time.Time) bool
}

// PreciseClock is the real clock with the precise pacer (pace.go): a timer,
// then nanosleep, then a spin of at most 150 µs before each arrival. It is
// the clock when Config.Clock is nil.
type PreciseClock struct{}

// Now is time.Now.
func (PreciseClock) Now() time.Time { return time.Now() }

// SleepUntil waits on a runtime timer.
func (PreciseClock) SleepUntil(ctx context.Context, deadline time.Time) bool {
	return timerUntil(ctx, deadline)
}

// PaceUntil waits in three stages (pace.go) so that it wakes within
// microseconds of deadline.
func (PreciseClock) PaceUntil(ctx context.Context, deadline time.Time) bool {
	return preciseUntil(ctx, deadline)
}

// TimerClock is the real clock waiting on runtime timers alone, the open
// loop's arrivals included: no CPU spent spinning, but an arrival may be
// up to about a millisecond late on an idle machine (pace.go). Inside a
// testing/synctest bubble, which fakes time.Now and timers, a phase run on
// TimerClock runs on simulated time.
type TimerClock struct{}

// Now is time.Now.
func (TimerClock) Now() time.Time { return time.Now() }

// SleepUntil waits on a runtime timer.
func (TimerClock) SleepUntil(ctx context.Context, deadline time.Time) bool {
	return timerUntil(ctx, deadline)
}

// PaceUntil waits on a runtime timer, like SleepUntil.
func (TimerClock) PaceUntil(ctx context.Context, deadline time.Time) bool {
	return timerUntil(ctx, deadline)
}

// timerUntil waits for deadline on a runtime timer; false means ctx ended
// first.
func timerUntil(ctx context.Context, deadline time.Time) bool {
	d := time.Until(deadline)
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}
