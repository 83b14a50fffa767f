package experiment

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
	"github.com/inferload/inferload/summary"
)

// recorder writes a run's records as they finish and keeps the live
// aggregate the progress line shows; with a live fold, that aggregate is
// the fold's, which the run's summary is assembled from (summary.FinishLive).
// Results arrive from one goroutine (the collector); the progress
// goroutine reads a snapshot under the same lock.
type recorder struct {
	files  *runFiles
	warmup time.Duration
	clock  engine.Clock // the run's

	mu         sync.Mutex
	agg        *record.Aggregate
	fold       *summary.Live // nil: the summary is assembled from the records read back
	series     *record.Series
	sawFailure bool
	// onResult is Options.OnResult: live exporters see each result.
	onResult func(*record.Result)
	// onWindow sees each per-second window once it is written.
	onWindow func(record.Window)
	// pacerLagUS is the worst queue delay since takePacerLag last read it;
	// the telemetry sampler reads it from its own goroutine.
	pacerLagUS atomic.Int64
	// err is the first write error. It stops issuing at once (onWriteFail)
	// and ends the run as a WriteFailure.
	err         error
	errMu       sync.Mutex
	onWriteFail func()
	// finished counts the records handed to the writer, for the count of
	// those missing from the file after a write failure.
	finished int64
}

func newRecorder(files *runFiles, p *plan.Plan, clock engine.Clock, fold *summary.Live) *recorder {
	r := &recorder{files: files, warmup: p.Load.Warmup, agg: summary.NewAggregate(p), clock: clock, fold: fold}
	if fold != nil {
		r.agg = fold.Aggregate()
	}
	r.series = record.NewSeries(func(w record.Window) {
		r.keep(files.series.Write(w))
		if r.onWindow != nil {
			r.onWindow(w)
		}
		if w.Failed >= observe.ErrorBurstMin {
			r.keep(files.events.Write(record.Event{TimeUS: w.TS * 1e6, Kind: observe.EventErrorBurst,
				Message: fmt.Sprintf("%d of %d requests failed in second %d", w.Failed, w.Completed, w.TS)}))
		}
	})
	return r
}

// add records one finished request: to disk first, then to the aggregates.
func (r *recorder) add(res *record.Result, start time.Time) {
	r.keep(r.files.records.Write(res))
	if r.onResult != nil {
		r.onResult(res)
	}
	storeMax(&r.pacerLagUS, res.QueueDelayUS)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finished++
	if r.fold != nil {
		r.fold.Add(res)
	} else {
		r.agg.Add(res)
	}
	r.series.Add(res)
	if !res.OK() && !res.ExpectedRejection() && !r.sawFailure {
		r.sawFailure = true
		msg := fmt.Sprintf("request %d: %s", res.ID, res.Error)
		if res.ErrorMsg != "" {
			msg += ": " + res.ErrorMsg
		}
		r.keep(r.files.events.Write(record.Event{TimeUS: r.clock.Now().Sub(start).Microseconds(), Kind: record.EventFirstError, Message: msg}))
	}
}

// takePacerLag returns and resets the worst queue delay seen since the
// last call: the pacer-lag figure of the client's telemetry.
func (r *recorder) takePacerLag() time.Duration {
	return time.Duration(r.pacerLagUS.Swap(0)) * time.Microsecond
}

// storeMax raises v to x unless another goroutine raised it further.
func storeMax(v *atomic.Int64, x int64) {
	for cur := v.Load(); x > cur; cur = v.Load() {
		if v.CompareAndSwap(cur, x) {
			return
		}
	}
}

// keep notes the first write error and stops issuing: load the files can
// no longer record is load measured for nothing.
func (r *recorder) keep(err error) {
	if err == nil {
		return
	}
	r.errMu.Lock()
	first := r.err == nil
	if first {
		r.err = err
	}
	r.errMu.Unlock()
	if first && r.onWriteFail != nil {
		r.onWriteFail()
	}
}

// failure is the first write error, nil while every write succeeded. It
// is read while the collectors of two stages may still write.
func (r *recorder) failure() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.err
}

// flushSeries closes the per-second window in progress.
func (r *recorder) flushSeries() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.series.Flush()
}

// RateSpan is how far back the progress line's rates look (a
// distributed run's collector shows the same line).
const RateSpan = 5 * time.Second

// snapshot is the live state for the progress line. Rates are what was
// delivered over the last few seconds of the run clock (runStart is its
// zero: records of a staged run's later stages are on it), warm-up
// included, so the line shows the server's current pace (record.Aggregate.Rate).
func (r *recorder) snapshot(p *plan.Plan, eng *engine.Engine, runStart time.Time) report.Snapshot {
	elapsed := r.clock.Now().Sub(eng.Started())
	now := r.clock.Now().Sub(runStart).Microseconds()
	r.mu.Lock()
	run := r.agg.Running()
	reqs, toks := r.agg.Rate(now, RateSpan.Microseconds())
	r.mu.Unlock()
	return report.Snapshot{
		Elapsed: elapsed, Total: p.Load.Duration, Target: p.Load.Requests,
		Done:     int(run.Succeeded + run.Failed + run.Warmup),
		InFlight: eng.InFlight(), TTFTP50: run.TTFTP50, TTFTP99: run.TTFTP99,
		Errors: int(run.Failed + run.WarmupFailed), Warmup: elapsed < r.warmup,
		ReqPerS: reqs, OutTokPerS: toks,
	}
}
