package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
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
		return func(ctx context.Context, r *runner) error {
			for i, st := range stages {
				if ctx.Err() != nil {
					break
				}
				step, _, err := r.runStaged(ctx, i+1, st)
				if err != nil {
					return err
				}
				if f := so.StopFailureRate; f > 0 && step.FailureRate > f {
					break
				}
			}
			return nil
		}, nil
	})
}

// runStaged runs stage index of a staged run and returns its step and
// what its records folded into.
func (r *runner) runStaged(ctx context.Context, index int, st schedule.Stage) (record.Step, *summary.StepAcc, error) {
	return r.runStagedWith(ctx, index, st, nil)
}

// runStagedWith is runStaged, with created seeing the stage's engine
// before it runs.
func (r *runner) runStagedWith(ctx context.Context, index int, st schedule.Stage, created func(*engine.Engine)) (record.Step, *summary.StepAcc, error) {
	cfg, err := r.stageConfig(index, st)
	if err != nil {
		return record.Step{}, nil, fmt.Errorf("stage %d (%s): %w", index, st.Describe(), err)
	}
	step, acc, err := r.runStage(ctx, stage{Index: index, Load: st, cfg: cfg, created: created})
	if err != nil {
		return record.Step{}, nil, fmt.Errorf("stage %d (%s): %w", index, st.Describe(), err)
	}
	return step, acc, nil
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
	if st.Mode == record.ModeClosed {
		cfg.Arrivals, cfg.Concurrency = nil, int(math.Max(st.From, st.Target))
		if st.Kind == record.StepRamp {
			cfg.Users = schedule.RampUsers(st.From, st.Target, st.Duration)
		}
		return cfg, nil
	}
	cfg.Concurrency, cfg.Think = 0, nil
	if st.Kind == record.StepRamp {
		cfg.Arrivals = schedule.NewRampArrivals(st.From, st.Target, st.Duration)
		return cfg, nil
	}
	arr, err := schedule.NewArrivals(p.Load.ArrivalProcess(), st.Target, p.Load.Burstiness, cfg.Seed)
	if err != nil {
		return engine.Config{}, fmt.Errorf("load.arrival: %w", err)
	}
	cfg.Arrivals = arr
	return cfg, nil
}
