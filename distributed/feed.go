package distributed

import (
	"bytes"
	"encoding/json"
	"sync"
	"time"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// Feed receives the segments' lines as the collector takes them, for a
// live view of the whole run: records, annotations and telemetry, each
// moved onto the live clock, whose zero is the common start the collector
// gave. Calls for one segment come in file order, one at a time; calls
// for different segments may come at once. A nil func is skipped.
//
// The live clock places a segment by its own run start and its measured
// clock offset once its events and segment.json have arrived (they are
// sent before its first record); until then it assumes the segment
// started on time. The merge at the end places segments on the earliest
// segment's start instead: the two differ by how late that segment was
// (under a second, or it refuses to run).
type Feed struct {
	Record func(seg int, r *record.Result)
	Event  func(seg int, e *record.Event)
	Sample func(seg int, s observe.Sample)
}

// feedState is what the collector knows of one segment's live clock, and
// the bytes of a line not yet complete in each file.
type feedState struct {
	mu       sync.Mutex
	started  time.Time   // the segment's run start on its own clock
	clock    ClockOffset // its offset from the collector's
	haveInfo bool
	partial  map[string][]byte
}

// maxPartial bounds a held incomplete line: segments send whole lines, so
// anything longer is not a line they wrote and is dropped.
const maxPartial = rundir.MaxLineBytes

// feed hands the lines of name that just arrived for segment i to the
// Feed; held reads the whole file as the collector holds it.
func (c *Collector) feed(i int, name string, data []byte, held func() []byte) {
	f := c.cfg.Feed
	if f == nil {
		return
	}
	st := c.feeds[i]
	st.mu.Lock()
	defer st.mu.Unlock()
	if name == rundir.Segment {
		// Written whole before the first upload: parse what is held.
		var si SegmentInfo
		if json.Unmarshal(held(), &si) == nil {
			st.clock, st.haveInfo = si.Clock, true
		}
		return
	}
	if st.partial == nil {
		st.partial = map[string][]byte{}
	}
	switch name {
	case rundir.Records:
		c.feedFrames(i, st, data)
	case rundir.RecordsPlain, rundir.Events, rundir.Telemetry:
		st.partial[name] = c.feedLines(i, st, name, append(st.partial[name], data...))
	}
}

// feedLines passes on each whole line of buf and returns the rest: a
// line still arriving, copied, or nothing when it is already too long to
// be a line a segment wrote.
func (c *Collector) feedLines(i int, st *feedState, name string, buf []byte) []byte {
	for {
		nl := bytes.IndexByte(buf, '\n')
		if nl < 0 {
			break
		}
		line := buf[:nl]
		buf = buf[nl+1:]
		if len(bytes.TrimSpace(line)) > 0 {
			c.feedLine(i, st, name, line)
		}
	}
	if len(buf) > maxPartial {
		return nil
	}
	return append([]byte(nil), buf...)
}

// feedFrames passes on the records of each whole zstd frame of a
// compressed records file that has arrived, and holds a frame still
// arriving. Segments upload whole frames of whole lines, so anything
// else (a frame that does not decode) is dropped here and left to the
// merge, which names it.
func (c *Collector) feedFrames(i int, st *feedState, data []byte) {
	buf := append(st.partial[rundir.Records], data...)
	lines, used, err := rundir.DecodeFrames(nil, buf)
	c.feedLines(i, st, rundir.Records, lines)
	rest := buf[used:]
	if err != nil || len(rest) > rundir.MaxFrameBytes {
		rest = nil
	}
	st.partial[rundir.Records] = append([]byte(nil), rest...)
}

// feedLine decodes one line and passes it on; a line that does not decode
// is left to the merge, which names it.
func (c *Collector) feedLine(i int, st *feedState, name string, line []byte) {
	f := c.cfg.Feed
	switch name {
	case rundir.Records, rundir.RecordsPlain:
		var r record.Result
		if json.Unmarshal(line, &r) != nil || f.Record == nil {
			return
		}
		r.Shift(c.liveShiftUS(st))
		f.Record(i, &r)
	case rundir.Events:
		var e record.Event
		if json.Unmarshal(line, &e) != nil {
			return
		}
		if e.Kind == record.EventRunStart {
			var info record.RunInfo
			info.Apply(&e)
			st.started = info.Started
			return
		}
		if f.Event != nil {
			e.TimeUS += c.liveShiftUS(st)
			f.Event(i, &e)
		}
	case rundir.Telemetry:
		var s observe.Sample
		if json.Unmarshal(line, &s) != nil || f.Sample == nil {
			return
		}
		s.TimeUS += c.liveShiftUS(st)
		f.Sample(i, s)
	}
}

// liveShiftUS is how far the segment's run clock is from the live clock:
// its run start on the collector's clock minus the common start; 0 until
// both are known.
func (c *Collector) liveShiftUS(st *feedState) int64 {
	at := c.StartAt()
	if st.started.IsZero() || !st.haveInfo || at.IsZero() {
		return 0
	}
	return st.started.Add(st.clock.Offset).Sub(at).Microseconds()
}

// StartAt is the common start on the collector's clock, zero until every
// segment is ready.
func (c *Collector) StartAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.startAt
}

// SilentAfter is how long a running segment may send nothing before the
// collector shows it silent: it uploads every second while it runs, so
// this is three missed uploads (a lost machine, or one cut off from the
// collector).
const SilentAfter = 3 * time.Second

// Phases of a segment as the collector sees it (SegmentStatus.Phase).
const (
	PhaseWaiting = "waiting" // not ready yet
	PhaseReady   = "ready"   // ready, waiting for the others or the start
	PhaseRunning = "running" // started and sending
	PhaseSilent  = "silent"  // started, nothing sent for SilentAfter
	PhaseDone    = "done"    // said done: everything sent
)

// Phase is where the segment is at now, given the common start (zero
// before every segment is ready).
func (s SegmentStatus) Phase(now, startAt time.Time) string {
	switch {
	case s.Done:
		return PhaseDone
	case !s.Ready:
		return PhaseWaiting
	case startAt.IsZero() || now.Before(startAt):
		return PhaseReady
	}
	last := s.LastSeen
	if last.Before(startAt) {
		last = startAt // its first upload comes as it starts
	}
	if now.Sub(last) > SilentAfter {
		return PhaseSilent
	}
	return PhaseRunning
}
