package distributed

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// recordStream reads one segment's records in a goroutine, each moved
// onto the merged clock.
type recordStream struct {
	ch   chan *record.Result
	done chan struct{} // closed once the reader has returned
	err  error
	st   rundir.ReadStats
	head *record.Result
}

// errStopped ends a reader whose merge gave up.
var errStopped = errors.New("merge stopped")

func startStream(sh *shard, stop <-chan struct{}) *recordStream {
	s := &recordStream{ch: make(chan *record.Result, 256), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer close(s.ch)
		s.st, s.err = rundir.ReadRecords(rundir.RecordsFile(sh.dir), func(r *record.Result) error {
			r.Shift(sh.offsetUS)
			select {
			case s.ch <- r:
				return nil
			case <-stop:
				return errStopped
			}
		})
	}()
	return s
}

// advance takes the stream's next record into head (nil at its end).
func (s *recordStream) advance() { s.head = <-s.ch }

// mergeRecords writes every segment's records into one records file in
// completion order (each segment's file is; a k-way merge keeps it so, as
// soak windows want), and the per-second series.jsonl from them. It
// returns how many segments ended in a cut-short line.
func mergeRecords(out string, shards []*shard) (int, error) {
	stop := make(chan struct{})
	streams := make([]*recordStream, len(shards))
	for i, sh := range shards {
		streams[i] = startStream(sh, stop)
	}
	werr := writeMerged(out, streams)
	close(stop)
	truncated := 0
	var errs []error
	for i, s := range streams {
		for range s.ch { // let a stopped reader return
		}
		<-s.done
		if s.err != nil && !errors.Is(s.err, errStopped) {
			errs = append(errs, fmt.Errorf("merge: %s: %w", shards[i].dir, s.err))
		}
		if s.st.Truncated > 0 {
			truncated++
		}
	}
	return truncated, errors.Join(append(errs, werr)...)
}

// writeMerged drains the streams, earliest completion first.
func writeMerged(out string, streams []*recordStream) error {
	records, err := rundir.NewJSONLWriter(rundir.RecordsFile(out))
	if err != nil {
		return err
	}
	series, err := rundir.NewJSONLWriter(filepath.Join(out, rundir.Series))
	if err != nil {
		records.Close()
		return err
	}
	var werr error
	keep := func(err error) {
		if werr == nil {
			werr = err
		}
	}
	windows := record.NewSeries(func(w record.Window) { keep(series.Write(w)) })
	for _, s := range streams {
		s.advance()
	}
	for werr == nil {
		next := -1
		for i, s := range streams {
			if s.head != nil && (next < 0 || s.head.DoneUS() < streams[next].head.DoneUS()) {
				next = i
			}
		}
		if next < 0 {
			break
		}
		r := streams[next].head
		keep(records.Write(r))
		windows.Add(r)
		streams[next].advance()
	}
	windows.Flush()
	return errors.Join(werr, records.Close(), series.Close())
}

// mergeEvents writes the merged events.jsonl: one run start (the earliest
// segment's), the segments' own annotations moved onto the merged clock
// and labelled with their segment, and the run's and each stage's marks
// combined over the segments (combineMarks).
func mergeEvents(out string, shards []*shard) error {
	start := slices.MinFunc(shards, func(a, b *shard) int { return a.started.Compare(b.started) }).started
	events := []record.Event{{Kind: record.EventRunStart, Message: start.UTC().Format(time.RFC3339Nano)}}
	var perShard []shardMarks
	for _, sh := range shards {
		m := shardMarks{stages: map[int]record.StageMark{}}
		if _, err := rundir.ReadEvents(filepath.Join(sh.dir, rundir.Events), func(e *record.Event) error {
			e.TimeUS += sh.offsetUS
			switch e.Kind {
			case record.EventRunStart:
			case record.EventWarmupEnd, record.EventMeasureEnd, record.EventRunEnd, record.EventInterrupted:
				m.run = append(m.run, *e)
			case record.EventStageEnd:
				if e.Stage != nil {
					mk := *e.Stage
					mk.StartUS += sh.offsetUS
					mk.WarmupEndUS += sh.offsetUS
					mk.MeasureEndUS += sh.offsetUS
					mk.EndUS = e.TimeUS
					m.stages[mk.Index] = mk
				}
			default:
				e.Message = "segment " + sh.seg.String() + ": " + e.Message
				events = append(events, *e)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("merge: %s: %w", sh.dir, err)
		}
		perShard = append(perShard, m)
	}
	events = append(events, combineMarks(perShard)...)
	slices.SortStableFunc(events[1:], func(a, b record.Event) int { return cmp.Compare(a.TimeUS, b.TimeUS) })
	w, err := rundir.NewJSONLWriter(filepath.Join(out, rundir.Events))
	if err != nil {
		return err
	}
	for _, e := range events {
		if err := w.Write(e); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// shardMarks are one segment's run-level and stage marks.
type shardMarks struct {
	run    []record.Event
	stages map[int]record.StageMark
}

// combineMarks is the merged run's clock marks. A window must hold the
// whole run's load, so it is where every segment was measuring: from the
// last warm-up end to the first issuing stop. The run ends with the last
// segment; it has a run_end only if every segment does (a killed segment
// makes the merged run a killed one) and it counts the records they all
// wrote, and it is interrupted if any was. A
// stage is a step of the merged run only if every segment finished it.
func combineMarks(shards []shardMarks) []record.Event {
	var out []record.Event
	type agg struct {
		at      int64
		count   int
		records int64 // run_end's, summed
		counted int   // run_ends that counted their records
	}
	marks := map[record.EventKind]*agg{}
	for _, sh := range shards {
		for _, e := range sh.run {
			a := marks[e.Kind]
			if a == nil {
				a = &agg{at: e.TimeUS}
				marks[e.Kind] = a
			}
			a.count++
			if e.Records > 0 {
				a.records += e.Records
				a.counted++
			}
			if e.Kind == record.EventMeasureEnd {
				a.at = min(a.at, e.TimeUS)
			} else {
				a.at = max(a.at, e.TimeUS)
			}
		}
	}
	all := len(shards)
	for _, k := range []record.EventKind{record.EventWarmupEnd, record.EventMeasureEnd, record.EventInterrupted, record.EventRunEnd} {
		a := marks[k]
		if a == nil || (k != record.EventInterrupted && a.count < all) {
			continue
		}
		e := record.Event{TimeUS: a.at, Kind: k}
		if k == record.EventInterrupted {
			e.Message = fmt.Sprintf("%d of %d segments stopped by signal", a.count, all)
		}
		if k == record.EventRunEnd && a.counted == all {
			e.Records = a.records // so the merged run counts what its segments lost
		}
		out = append(out, e)
	}
	for index := 1; ; index++ {
		m, ok := combineStage(shards, index)
		if !ok {
			break
		}
		end := m.EndUS
		out = append(out, record.Event{TimeUS: end, Kind: record.EventStageEnd, Stage: &m})
	}
	return out
}

// combineStage is stage index over every segment, false unless all
// finished it.
func combineStage(shards []shardMarks, index int) (record.StageMark, bool) {
	var m record.StageMark
	for i, sh := range shards {
		s, ok := sh.stages[index]
		if !ok {
			return record.StageMark{}, false
		}
		if i == 0 {
			m = s
			continue
		}
		m.StartUS = min(m.StartUS, s.StartUS)
		m.WarmupEndUS = max(m.WarmupEndUS, s.WarmupEndUS)
		m.MeasureEndUS = min(m.MeasureEndUS, s.MeasureEndUS)
		m.EndUS = max(m.EndUS, s.EndUS)
		m.Interrupted = m.Interrupted || s.Interrupted
	}
	return m, true
}
