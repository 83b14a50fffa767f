package experiment

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
)

// recorder owns a run's aggregates. Results arrive from one goroutine (the
// collector); the progress goroutine reads a snapshot under the same lock.
type recorder struct {
	files  *runFiles
	name   string
	mode   string
	warmup time.Duration

	mu         sync.Mutex
	agg        *record.Aggregate
	series     *record.Series
	sawFailure bool
	err        error // first write error; the run goes on, the error is reported at the end
}

func newRecorder(files *runFiles, p *plan.Plan) *recorder {
	r := &recorder{files: files, name: p.Name, mode: record.ModeClosed, warmup: p.Load.Warmup, agg: record.NewAggregate()}
	if p.Load.Rate > 0 {
		r.mode = record.ModeOpen
	}
	r.series = record.NewSeries(func(w record.Window) { r.keep(files.series.Write(w)) })
	return r
}

// add records one finished request: to disk first, then to the aggregates.
func (r *recorder) add(res *record.Result, start time.Time) {
	r.keep(r.files.records.Write(res))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.agg.Add(res)
	r.series.Add(res)
	if !res.OK() && !r.sawFailure {
		r.sawFailure = true
		msg := fmt.Sprintf("request %d: %s", res.ID, res.Error)
		if res.ErrorMsg != "" {
			msg += ": " + res.ErrorMsg
		}
		r.keep(r.files.events.Write(record.Event{TimeUS: time.Since(start).Microseconds(), Kind: record.EventFirstError, Message: msg}))
	}
}

func (r *recorder) keep(err error) {
	if err != nil && r.err == nil {
		r.err = err
	}
}

// finish writes the closing events and returns what the summary needs.
func (r *recorder) finish(eng *engine.Engine, start time.Time, interrupted bool) record.RunInfo {
	endUS := time.Since(start).Microseconds()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.series.Flush()
	info := record.RunInfo{Name: r.name, Started: start.UTC(), Mode: r.mode, EndUS: endUS, Interrupted: interrupted}
	events := []record.Event{}
	if r.warmup > 0 {
		info.WarmupEndUS = min(r.warmup.Microseconds(), endUS)
		events = append(events, record.Event{TimeUS: info.WarmupEndUS, Kind: record.EventWarmupEnd})
	}
	events = append(events, record.Event{TimeUS: eng.StoppedIssuingUS(), Kind: record.EventMeasureEnd})
	if interrupted {
		events = append(events, record.Event{TimeUS: endUS, Kind: record.EventInterrupted, Message: "stopped by signal"})
	}
	events = append(events, record.Event{TimeUS: endUS, Kind: record.EventRunEnd})
	for _, e := range events {
		r.keep(r.files.events.Write(e))
	}
	return info
}

func (r *recorder) summary(info record.RunInfo) *record.Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.agg.Summary(info)
}

// snapshot is the live state for the progress line.
func (r *recorder) snapshot(p *plan.Plan, eng *engine.Engine) report.Snapshot {
	r.mu.Lock()
	run := r.agg.Running()
	r.mu.Unlock()
	elapsed := time.Since(eng.Started())
	s := report.Snapshot{
		Elapsed: elapsed, Total: p.Load.Duration, Target: p.Load.Requests,
		Done:     int(run.Succeeded + run.Failed + run.Warmup + run.WarmupFailed),
		InFlight: eng.InFlight(), TTFTP50: run.TTFTP50, TTFTP99: run.TTFTP99,
		Errors: int(run.Failed + run.WarmupFailed), Warmup: elapsed < r.warmup,
	}
	if measured := (elapsed - r.warmup).Seconds(); measured > 0 {
		s.ReqPerS = float64(run.Succeeded) / measured
		s.OutTokPerS = float64(run.OutputTokens) / measured
	}
	return s
}

// errNoRecords says a run directory holds nothing to rebuild from.
var errNoRecords = errors.New("no records")
