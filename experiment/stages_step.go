package experiment

import (
	"context"
	"fmt"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/record"
)

// runStage runs one stage as its own engine phase and returns its step.
// Its records are moved onto the run clock (the first stage's start) and
// tagged with the stage's index.
func (r *stagedRun) runStage(ctx context.Context, index int, st Stage) (record.Step, error) {
	cfg, err := r.stageConfig(index, st)
	if err != nil {
		return record.Step{}, err
	}
	eng, err := engine.New(cfg)
	if err != nil {
		return record.Step{}, err
	}
	out := make(chan *record.Result, 1024)
	go func() { _ = eng.Run(ctx, out) }()
	started := eng.Started()
	r.current.Store(eng)
	defer forwardAbort(r.opts.Abort, eng)()
	if err := r.markStart(ctx, started, index, st); err != nil {
		eng.Abort()
		for range out { // let the engine finish: nothing is recorded
		}
		return record.Step{}, err
	}
	offUS := started.Sub(r.start).Microseconds()
	stageLoad := *r.p
	stageLoad.Load.Duration, stageLoad.Load.Requests = st.Duration, 0
	stopProgress := startProgress(r.opts, &stageLoad, eng, r.rec)
	sampler := sampleInFlight(eng, r.p.Load.Warmup)

	agg, good := record.NewAggregate(), int64(0)
	slos := r.p.Workload.SLOs()
	base := r.nextID
	for res := range out {
		shift(res, offUS, base, index)
		r.nextID = max(r.nextID, res.ID+1)
		r.rec.add(res, r.start)
		agg.Add(res)
		if r.onResult != nil {
			r.onResult(res)
		}
		if !res.Warmup && slos.For(res.Class).Met(res) {
			good++
		}
	}
	stopProgress()
	meanInFlight := sampler()

	r.endUS = time.Since(r.start).Microseconds()
	r.measureUS = offUS + eng.StoppedIssuingUS()
	info := record.RunInfo{Mode: st.Mode, WarmupEndUS: offUS + r.p.Load.Warmup.Microseconds(),
		MeasureEndUS: r.measureUS, EndUS: r.endUS}
	step := stepFrom(agg.Summary(info), index, st, float64(offUS)/1e6, good)
	step.Validity.AchievedLoad = r.achieved(st, &step, meanInFlight)
	if err := analyze.Judge(&step, r.so.Criteria); err != nil {
		return record.Step{}, err
	}
	return step, nil
}

// shift moves a record from its stage's clock onto the run clock.
func shift(res *record.Result, offUS int64, base uint64, index int) {
	res.ID += base
	res.Step = index
	res.SendUS += offUS
	for k := range res.Attempts { // a retried request's earlier tries
		res.Attempts[k].SendUS += offUS
		res.Attempts[k].EndUS += offUS
	}
	if res.OpenLoop {
		res.IntendedUS += offUS
	}
}

// markStart starts the run clock with the first stage and notes every
// stage's start in events.jsonl.
func (r *stagedRun) markStart(ctx context.Context, started time.Time, index int, st Stage) error {
	if r.start.IsZero() {
		r.start = started
		if err := r.files.events.Write(record.Event{Kind: record.EventRunStart, Message: started.UTC().Format(time.RFC3339Nano)}); err != nil {
			return err
		}
		tel, err := startTelemetry(ctx, r.p, r.dir, started, r.files.events, r.rec.takePacerLag)
		if err != nil {
			return err
		}
		r.tel = tel
		for _, e := range planNotes(r.p) {
			r.rec.keep(r.files.events.Write(e))
		}
		if r.opts.Started != nil {
			r.opts.Started(r.dir)
		}
	}
	msg := fmt.Sprintf("stage %d start: %s", index, st.describe())
	return r.files.events.Write(record.Event{TimeUS: started.Sub(r.start).Microseconds(), Kind: record.EventNote, Message: msg})
}

// achieved is the load the client really applied: the mean number of
// requests in flight over the measured part of a closed-loop stage (users
// with think time are idle between requests, so there the target stands),
// or the measured requests per second of an open-loop one.
func (r *stagedRun) achieved(st Stage, step *record.Step, meanInFlight float64) float64 {
	if st.Mode == record.ModeOpen {
		if step.WindowS <= 0 {
			return 0
		}
		return float64(step.Requests.Succeeded+step.Requests.Failed) / step.WindowS
	}
	if r.p.Load.ThinkTime != "" {
		return st.Target
	}
	return meanInFlight
}

// stepFrom copies a stage's summary into its step entry.
func stepFrom(s *record.Summary, index int, st Stage, startS float64, good int64) record.Step {
	step := record.Step{
		Index: index, Kind: st.Kind, Mode: st.Mode, Target: st.Target, StartS: startS,
		WindowS: s.WindowS, Requests: s.Requests, FailureRate: s.FailureRate, Errors: s.Errors,
		Metrics: s.Metrics, Throughput: s.Throughput, Warnings: s.Warnings,
	}
	if st.Kind == record.StepRamp {
		step.From = st.From
	}
	if s.WindowS > 0 {
		step.GoodputPerS = float64(good) / s.WindowS
	}
	return step
}

// inFlightEvery is how often a stage samples the requests in flight.
const inFlightEvery = 10 * time.Millisecond

// sampleInFlight averages eng.InFlight() over the measured part of the
// phase (after the warm-up, while issuing). The returned function stops
// sampling and returns the mean.
func sampleInFlight(eng *engine.Engine, warmup time.Duration) func() float64 {
	done := make(chan struct{})
	mean := make(chan float64, 1)
	go func() {
		t := time.NewTicker(inFlightEvery)
		defer t.Stop()
		var sum, n float64
		for {
			select {
			case <-t.C:
				if time.Since(eng.Started()) >= warmup && eng.StoppedIssuingUS() == 0 {
					sum += float64(eng.InFlight())
					n++
				}
			case <-done:
				if n == 0 {
					n = 1
				}
				mean <- sum / n
				return
			}
		}
	}()
	return func() float64 { close(done); return <-mean }
}
