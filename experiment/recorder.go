package experiment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/observe"
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
	// onResult is Options.OnResult: live exporters see each result.
	onResult func(*record.Result)
	// pacerLagUS is the worst queue delay since takePacerLag last read it;
	// the telemetry sampler reads it from its own goroutine.
	pacerLagUS atomic.Int64
	err        error // first write error; the run goes on, the error is reported at the end
}

func newRecorder(files *runFiles, p *plan.Plan) *recorder {
	r := &recorder{files: files, name: p.Name, mode: p.Load.Mode(), warmup: p.Load.Warmup, agg: record.NewAggregate()}
	r.agg.SetInputBuckets(p.Workload.LengthBuckets)
	r.agg.SetSLOs(p.Workload.SLOs())
	r.agg.SetModel(p.Compute.Model())
	r.series = record.NewSeries(func(w record.Window) {
		r.keep(files.series.Write(w))
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
	r.agg.Add(res)
	r.series.Add(res)
	if !res.OK() && !res.ExpectedRejection() && !r.sawFailure {
		r.sawFailure = true
		msg := fmt.Sprintf("request %d: %s", res.ID, res.Error)
		if res.ErrorMsg != "" {
			msg += ": " + res.ErrorMsg
		}
		r.keep(r.files.events.Write(record.Event{TimeUS: time.Since(start).Microseconds(), Kind: record.EventFirstError, Message: msg}))
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
	info := record.RunInfo{Name: r.name, Started: start.UTC(), Mode: r.mode, EndUS: endUS,
		MeasureEndUS: eng.StoppedIssuingUS(), Interrupted: interrupted}
	events := []record.Event{}
	if r.warmup > 0 {
		info.WarmupEndUS = min(r.warmup.Microseconds(), endUS)
		events = append(events, record.Event{TimeUS: info.WarmupEndUS, Kind: record.EventWarmupEnd})
	}
	events = append(events, record.Event{TimeUS: info.MeasureEndUS, Kind: record.EventMeasureEnd})
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

// rateSpan is how far back the progress line's rates look.
const rateSpan = 5 * time.Second

// snapshot is the live state for the progress line. Rates are what was
// delivered over the last few seconds, warm-up included, so the line shows
// the server's current pace.
func (r *recorder) snapshot(p *plan.Plan, eng *engine.Engine) report.Snapshot {
	elapsed := time.Since(eng.Started())
	now := elapsed.Microseconds()
	r.mu.Lock()
	run := r.agg.Running()
	reqs, toks := r.agg.Rate(max(now-rateSpan.Microseconds(), 0), now)
	r.mu.Unlock()
	return report.Snapshot{
		Elapsed: elapsed, Total: p.Load.Duration, Target: p.Load.Requests,
		Done:     int(run.Succeeded + run.Failed + run.Warmup),
		InFlight: eng.InFlight(), TTFTP50: run.TTFTP50, TTFTP99: run.TTFTP99,
		Errors: int(run.Failed + run.WarmupFailed), Warmup: elapsed < r.warmup,
		ReqPerS: reqs, OutTokPerS: toks,
	}
}

// applyPlanJudging gives agg the SLOs and model size a run directory's
// plan.yaml declares, so a rebuilt summary judges goodput and estimates
// FLOPs exactly as the live run (newRecorder) did.
func applyPlanJudging(agg *record.Aggregate, dir string) error {
	path := filepath.Join(dir, PlanFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	var p struct {
		Workload struct {
			SLO     record.SLO `yaml:"slo"`
			Classes []struct {
				Name string     `yaml:"name"`
				SLO  record.SLO `yaml:"slo"`
			} `yaml:"classes"`
		} `yaml:"workload"`
		Compute plan.Compute `yaml:"compute"`
	}
	if err := yaml.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	w := plan.Workload{SLO: p.Workload.SLO}
	for _, c := range p.Workload.Classes {
		w.Classes = append(w.Classes, plan.Class{Name: c.Name, SLO: c.SLO})
	}
	agg.SetSLOs(w.SLOs())
	agg.SetModel(p.Compute.Model())
	return nil
}

// errNoRecords says a run directory holds nothing to rebuild from.
var errNoRecords = errors.New("no records")
