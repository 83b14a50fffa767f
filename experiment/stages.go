package experiment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/summary"
)

// StageOptions tune what a staged run judges and when it stops. The zero
// value uses every default.
type StageOptions struct {
	// Criteria decide each step's validity (analyze.Judge).
	Criteria analyze.Criteria
	// StopFailureRate, when above 0, ends the run after the first stage
	// whose failure rate exceeds it: a sweep stops where errors start.
	StopFailureRate float64
}

// RunStaged runs the plan's load.stages, one engine phase per stage, into
// one run directory: records carry their stage in step, and summary.json
// gets the whole run's figures plus one entry per stage in steps.
func RunStaged(ctx context.Context, p *plan.Plan, opts Options, so StageOptions) (*Outcome, error) {
	stages, err := schedule.ParseStages(p.Load.Stages, p.Load.Mode())
	if err != nil {
		return nil, err
	}
	return runStages(ctx, p, stages, opts, so, summary.Design{Kind: summary.KindStages})
}

// runStages runs stages already built (a sweep builds its own) in order;
// a canceled ctx stops after the current one.
func runStages(ctx context.Context, p *plan.Plan, stages []schedule.Stage, opts Options, so StageOptions, d summary.Design) (*Outcome, error) {
	if len(stages) == 0 {
		return nil, errors.New("load.stages: no stage to run")
	}
	for _, st := range stages {
		if err := checkWarmup(p, st.Duration); err != nil {
			return nil, fmt.Errorf("%w (%s)", err, st.Describe())
		}
	}
	d.Criteria = so.Criteria
	return execute(ctx, p, opts, d, func(r *runner) (driver, error) {
		if _, err := r.stageConfig(1, stages[0]); err != nil {
			return nil, err
		}
		return func(ctx context.Context, r *runner) error { return r.runSequence(ctx, stages, so.StopFailureRate) }, nil
	})
}

// runSequence runs stages in order, each taking over from the one before
// the moment it stops issuing (launchStaged): the load changes without a
// hole. A canceled ctx stops after the current stage; with stopRate above
// 0, so does a stage whose failure rate, over the requests it had
// finished when it stopped issuing, exceeds it (the next stage starts at
// that moment, so no later figure can hold it back).
func (r *runner) runSequence(ctx context.Context, stages []schedule.Stage, stopRate float64) error {
	var prev *running
	for i, st := range stages {
		if ctx.Err() != nil {
			break
		}
		cur, err := r.stageAfter(ctx, i+1, st, prev, nil)
		if err != nil {
			return err
		}
		prev = cur
		if stopRate > 0 && r.failureRateSoFar(cur) > stopRate {
			break
		}
	}
	return r.finishStaged(prev)
}

// failureRateSoFar is ru's failure rate over the records it has
// finished so far.
func (r *runner) failureRateSoFar(ru *running) float64 {
	r.collectMu.Lock()
	defer r.collectMu.Unlock()
	return ru.acc.FailureRate()
}

// runStaged runs stage index of a staged run to its end, after the
// previous stage has finished (a capacity search chooses each probe's
// load from the one before), and returns its step and what its records
// folded into.
func (r *runner) runStaged(ctx context.Context, index int, st schedule.Stage) (record.Step, *summary.StepAcc, error) {
	ru, err := r.launchStaged(ctx, index, st, nil, nil)
	if err != nil {
		return record.Step{}, nil, err
	}
	step, acc, err := r.finish(ru)
	if err != nil {
		return record.Step{}, nil, fmt.Errorf("stage %d (%s): %w", index, st.Describe(), err)
	}
	return step, acc, nil
}

// launchStaged starts stage index of a staged run, taking over from prev
// (nil: none), with created seeing the stage's engine before it runs.
func (r *runner) launchStaged(ctx context.Context, index int, st schedule.Stage, prev *running, created func(*engine.Engine)) (*running, error) {
	r.reserveIDs(prev)
	cfg, err := r.stageConfig(index, st)
	if err == nil {
		var ru *running
		if ru, err = r.launch(ctx, stage{Index: index, Load: st, cfg: cfg, created: created}, prev); err == nil {
			return ru, nil
		}
	}
	return nil, fmt.Errorf("stage %d (%s): %w", index, st.Describe(), err)
}

// stageAfter starts stage index from prev (launchStaged), finishes prev
// and waits until the new stage stops issuing: the next hand-over can
// then start while its last requests finish. On an error every started
// stage is finished.
func (r *runner) stageAfter(ctx context.Context, index int, st schedule.Stage, prev *running, created func(*engine.Engine)) (*running, error) {
	cur, err := r.launchStaged(ctx, index, st, prev, created)
	if err != nil {
		return nil, errors.Join(err, r.finishStaged(prev))
	}
	if err := r.finishStaged(prev); err != nil {
		<-cur.issuingDone()
		return nil, errors.Join(err, r.finishStaged(cur))
	}
	<-cur.issuingDone()
	return cur, nil
}

// finishStaged finishes ru (nil: nothing to finish), once it has stopped
// issuing: the next stage, if any, has started.
func (r *runner) finishStaged(ru *running) error {
	if ru == nil {
		return nil
	}
	ru.stopProgress()
	if _, _, err := r.finish(ru); err != nil {
		return fmt.Errorf("stage %d (%s): %w", ru.st.Index, ru.st.Load.Describe(), err)
	}
	return nil
}

// checkWarmup: each stage discards its own warm-up, so the warm-up must be
// shorter than every stage.
func checkWarmup(p *plan.Plan, stage time.Duration) error {
	if p.Load.Warmup >= stage {
		return fmt.Errorf("load.warmup %s: each stage discards its own warm-up, so it must be shorter than every stage", p.Load.Warmup)
	}
	return nil
}

// stageConfig is the engine phase of stage index, whose requests are
// numbered after the previous stages'.
func (r *runner) stageConfig(index int, st schedule.Stage) (engine.Config, error) {
	p := r.p
	cfg, err := engineConfig(p, r.client, r.inputs)
	if err != nil {
		return engine.Config{}, err
	}
	cfg.Source = offsetSource{src: cfg.Source, base: r.stageBase(index)}
	cfg.Duration, cfg.Requests, cfg.Warmup = st.Duration, 0, p.Load.Warmup
	cfg.Seed = p.Workload.Seed + uint64(index)
	if cfg.Shape, err = stageShape(p, st, cfg.Seed); err != nil {
		return engine.Config{}, err
	}
	return cfg, nil
}
