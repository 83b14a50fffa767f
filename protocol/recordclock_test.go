package protocol

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// stampKind is what one arrival of a generated record carried.
type stampKind int

const (
	stampFresh    stampKind = iota // a kernel stamp after the send and the one before
	stampMissing                   // no kernel stamp: the user-space clock only
	stampStale                     // a kernel stamp from before the send (another reply's)
	stampBackward                  // a kernel stamp before the previous arrival's
)

// genArrival is one arrival of a generated record: when its read returned
// (user) and what the kernel said (at, lag, kernel).
type genArrival struct {
	user time.Time
	a    arrival
}

// genRecord makes n arrivals after sent, each read returning later than
// the one before, with the kernel stamps of kinds drawn by r.
func genRecord(r *rand.Rand, sent time.Time, n int, pMiss float64) []genArrival {
	out := make([]genArrival, n)
	user, lastK := sent, sent
	for i := range out {
		user = user.Add(time.Duration(r.IntN(3000)) * time.Microsecond)
		kind := stampFresh
		if r.Float64() < pMiss {
			kind = stampKind(1 + r.IntN(3))
		}
		lag := time.Duration(r.IntN(2000)) * time.Microsecond
		at := user.Add(-lag)
		switch kind {
		case stampFresh:
			if at.Before(lastK) {
				at, lag = lastK, user.Sub(lastK)
			}
		case stampMissing:
			at, lag = user, 0
		case stampStale:
			at = sent.Add(-time.Duration(1+r.IntN(5000)) * time.Microsecond)
			lag = user.Sub(at)
		case stampBackward:
			at = lastK.Add(-time.Duration(1+r.IntN(500)) * time.Microsecond)
			lag = user.Sub(at)
		}
		if kind == stampFresh {
			lastK = at
		}
		out[i] = genArrival{user, arrival{at, lag, kind != stampMissing}}
	}
	return out
}

// TestRecordClockProperty: over records of every mix of kernel stamps
// (fresh, missing, stale, going back) and endings (an end marker, the
// body's end, a failure's instant), no latency is negative, the event
// offsets never go back, the end is at or after the last event, and the
// record is wholly on one clock: the kernel's exactly when every arrival
// had a fresh stamp in order, else each instant is its read's return.
func TestRecordClockProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 4))
	for i := range 5000 {
		sent := time.Now().Add(-time.Hour)
		n := 1 + r.IntN(40)
		if i%500 == 0 {
			n = record.MaxEventsKept + 1 + r.IntN(200) // past the kept events: the tail
		}
		pMiss := []float64{0, 0.01, 0.2, 1}[r.IntN(4)]
		arr := genRecord(r, sent, n+1, pMiss) // the last is the end
		failed := r.IntN(4) == 0              // ended by a failure's own instant
		tr := &Trace{Sent: sent}
		var rc recordClock
		for _, g := range arr[:n] {
			rc.event(tr, g.a)
			tr.ContentEvents++
		}
		end := arr[n]
		if failed {
			tr.End = end.user
		} else {
			rc.end(tr, end.a)
		}
		rc.settle(tr)

		allKernel := !failed
		for _, g := range arr {
			allKernel = allKernel && g.a.kernel && !g.a.at.Before(sent)
		}
		// A fresh stamp can still go back behind its predecessor only as a
		// generated stampBackward; genRecord keeps the others in order.
		for k := 1; allKernel && k < len(arr); k++ {
			allKernel = !arr[k].a.at.Before(arr[k-1].a.at)
		}
		wantClock := ClockUser
		if allKernel {
			wantClock = ClockKernel
		}
		if tr.Clock != wantClock {
			t.Fatalf("record %d: clock %q, want %q", i, tr.Clock, wantClock)
		}
		pick := func(g genArrival) time.Time {
			if allKernel {
				return g.a.at
			}
			return g.user
		}
		ttft, e2e := tr.FirstToken.Sub(sent), tr.End.Sub(sent)
		if ttft < 0 || e2e < ttft {
			t.Fatalf("record %d (%s): ttft %v e2e %v", i, tr.Clock, ttft, e2e)
		}
		if !tr.FirstToken.Equal(pick(arr[0])) {
			t.Fatalf("record %d (%s): first token %v, want %v", i, tr.Clock, ttft, pick(arr[0]).Sub(sent))
		}
		wantEnd := pick(end)
		if failed {
			wantEnd = end.user
		}
		if !tr.End.Equal(wantEnd) {
			t.Fatalf("record %d (%s): end %v, want %v", i, tr.Clock, e2e, wantEnd.Sub(sent))
		}
		prev := int64(0)
		for k, us := range tr.EventsUS {
			if want := pick(arr[k]).Sub(sent).Microseconds(); us != want || us < prev {
				t.Fatalf("record %d (%s): event %d at %d µs, want %d (previous %d)", i, tr.Clock, k, us, want, prev)
			}
			prev = us
		}
		if tr.Tail.Dropped > 0 {
			if want := pick(arr[n-1]).Sub(sent).Microseconds(); tr.Tail.LastUS != want {
				t.Fatalf("record %d (%s): tail ends at %d µs, want %d", i, tr.Clock, tr.Tail.LastUS, want)
			}
			prev = tr.Tail.LastUS
		}
		if e2e.Microseconds() < prev {
			t.Fatalf("record %d (%s): e2e %v before the last event at %d µs", i, tr.Clock, e2e, prev)
		}
	}
}
