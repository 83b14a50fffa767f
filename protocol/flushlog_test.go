package protocol_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/sim"
)

// flushWindow is one flush of a streamed reply as the server made it:
// its bytes reached the kernel (and, on loopback, the client's socket)
// between before and after, and they held events content events.
type flushWindow struct {
	before, after time.Time
	events        int
}

// flushLog records a server's flushes: the truth a client's token stamps
// are checked against, whatever the host's load made of the server's
// schedule.
type flushLog struct {
	mu      sync.Mutex
	pending []byte
	windows []flushWindow
}

// contentDeltas are the chat chunk openings that carry a token, reasoning
// or answer (the role chunk and the usage chunk carry none).
var contentDeltas = [][]byte{[]byte(`"delta":{"reasoning_content":"`), []byte(`"delta":{"content":"`)}

func (l *flushLog) write(b []byte) {
	l.mu.Lock()
	l.pending = append(l.pending, b...)
	l.mu.Unlock()
}

func (l *flushLog) flushed(before, after time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, d := range contentDeltas {
		n += bytes.Count(l.pending, d)
	}
	l.windows = append(l.windows, flushWindow{before, after, n})
	l.pending = l.pending[:0]
}

// reset forgets the flushes so far, before the next reply.
func (l *flushLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending, l.windows = l.pending[:0], nil
}

// eventWindows returns, for each content event in order, the index of
// the flush that sent it, and the flushes.
func (l *flushLog) eventWindows() ([]int, []flushWindow) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var of []int
	for i, w := range l.windows {
		for range w.events {
			of = append(of, i)
		}
	}
	return of, append([]flushWindow(nil), l.windows...)
}

// flushRecorder passes a reply through, stamping each flush.
type flushRecorder struct {
	http.ResponseWriter
	log *flushLog
}

func (w flushRecorder) Write(b []byte) (int, error) {
	w.log.write(b)
	return w.ResponseWriter.Write(b)
}

// FlushError is what http.ResponseController calls.
func (w flushRecorder) FlushError() error {
	before := time.Now()
	err := http.NewResponseController(w.ResponseWriter).Flush()
	w.log.flushed(before, time.Now())
	return err
}

func (w flushRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// startRecordedProfile serves prof like startProfile, every reply's
// flushes recorded in the returned log (one request at a time: the
// replies' bytes are not told apart).
func startRecordedProfile(t *testing.T, prof sim.Profile) (*sim.Server, string, *flushLog) {
	t.Helper()
	srv, err := sim.New(sim.Config{Profile: prof, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	log := &flushLog{}
	h := srv.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(flushRecorder{w, log}, r)
	}))
	t.Cleanup(hs.Close)
	return srv, hs.URL + "/v1", log
}

// stampSlack allows for the kernel stamp's conversion to the monotonic
// clock (protocol's fromKernel: 500 ppm of the read lag and the
// nanoseconds between two clock reads) and EventsUS's microseconds.
const stampSlack = 50 * time.Microsecond

// within reports whether at lies inside w, give or take stampSlack.
func (w flushWindow) within(at time.Time) bool {
	return !at.Before(w.before.Add(-stampSlack)) && !at.After(w.after.Add(stampSlack))
}

// stampsInFlushes checks that every content event of tr is stamped no
// earlier than the flush that sent it began and no later than the reply
// ended, reporting each that is not (failed true), and counts those
// inside their own flush's window. A stamp may fall after its flush
// returned: a read that took several flushes' bytes carries the last
// one's stamp, and on a loaded host loopback delivers a flush's bytes
// after the server's write returned (63 µs after it once in CI).
func stampsInFlushes(t *testing.T, tr protocol.Trace, log *flushLog) (own int, failed bool) {
	t.Helper()
	of, w := log.eventWindows()
	if len(of) != len(tr.EventsUS) {
		t.Errorf("the server flushed %d content events, the client stamped %d", len(of), len(tr.EventsUS))
		return 0, true
	}
	for k, us := range tr.EventsUS {
		at := tr.Sent.Add(time.Duration(us) * time.Microsecond)
		if w[of[k]].within(at) {
			own++
		}
		if at.Before(w[of[k]].before.Add(-stampSlack)) || at.After(tr.End.Add(stampSlack)) {
			t.Errorf("event %d stamped %v after the first flush: before its flush began (%v) or after the reply ended (%v)",
				k, at.Sub(w[0].before), w[of[k]].before.Sub(w[0].before), tr.End.Sub(w[0].before))
			failed = true
		}
	}
	return own, failed
}
