package protocol

import "time"

// The clocks a client's token events can be stamped with (Trace.Clock,
// docs/metrics.md#two-clocks-for-arrivals).
const (
	// ClockKernel: each event carries the kernel's receive timestamp of the
	// TCP segment that delivered its final bytes (Linux SO_TIMESTAMPING,
	// software RX stamps), converted to the monotonic clock. The client's
	// own delay in reading the socket is not in any latency.
	ClockKernel = "kernel"
	// ClockUser: each event carries the instant the client's read returned
	// (time.Now after the read), so the client's own scheduling delay is
	// in every latency. Used where the kernel's stamps are off or refused.
	ClockUser = "user"
)

// ClockFor is the clock a client built with OpenAIOptions.UserClock set
// to userClock stamps its events with on this system (OpenAI.Clock).
func ClockFor(userClock bool) string {
	if !userClock && stampable() {
		return ClockKernel
	}
	return ClockUser
}

// maxReadLag bounds a plausible kernel stamp: a stamp further than this
// behind the read (or any distance ahead of it) means the wall clock was
// stepped between the two, so the read falls back to the user-space clock.
const maxReadLag = 30 * time.Second

// maxStampSkew is how far a kernel stamp may lie ahead of the read that
// returned it before it is distrusted: the two come from the same clock
// source, so only rounding separates them.
const maxStampSkew = time.Millisecond

// monoBase anchors the write stamps a stampConn keeps as integers: an
// offset from it on the monotonic clock, turned back into a time.Time
// (with its monotonic reading) by monoAt.
var monoBase = time.Now()

// monoAt is the instant ns after monoBase on the monotonic clock.
func monoAt(ns int64) time.Time { return monoBase.Add(time.Duration(ns)) }

// monoNow is the monotonic instant now, as an offset from monoBase.
func monoNow() int64 { return int64(time.Since(monoBase)) }

// rxSource gives the kernel receive stamp of the last read on a
// connection: realtime nanoseconds, 0 before the first stamped read.
type rxSource interface {
	rxNano() int64
}

// fromKernel converts a kernel receive stamp to the monotonic clock.
//
// The kernel stamps with CLOCK_REALTIME; Go's latencies use the monotonic
// clock, and the two differ by an offset that NTP slews (at most 500 ppm)
// and an administrator may step. now is read right after the read
// returned: now.UnixNano() is its realtime reading and now's monotonic
// reading the same instant on the other clock, so lag = now − stamp on
// the realtime clock, and the event happened lag before now on the
// monotonic one. The offset is thus measured afresh at every read; the
// only error is the slew over lag itself (≤ 500 ppm of it: 10 µs for a
// 20 ms lag) plus the nanoseconds between time.Now's two clock reads. A
// step of the wall clock between the segment's arrival and the read gives
// an implausible lag (negative, or over maxReadLag): ok is false then and
// the caller keeps now.
func fromKernel(now time.Time, rxNS int64) (at time.Time, lag time.Duration, ok bool) {
	if rxNS == 0 {
		return now, 0, false
	}
	lag = time.Duration(now.UnixNano() - rxNS)
	switch {
	case lag < -maxStampSkew || lag > maxReadLag:
		return now, 0, false
	case lag < 0:
		lag = 0
	}
	return now.Add(-lag), lag, true
}

// readStamp stamps a read that has just returned: the kernel's receive
// stamp of its bytes when src has one (ok true), else now.
func readStamp(now time.Time, src rxSource) (at time.Time, lag time.Duration, kernel bool) {
	if src == nil {
		return now, 0, false
	}
	return fromKernel(now, src.rxNano())
}
