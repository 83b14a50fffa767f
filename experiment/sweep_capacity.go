package experiment

import (
	"context"
	"fmt"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/summary"
)

// CapacityOptions describe an SLO capacity search.
type CapacityOptions struct {
	// Mode is record.ModeClosed (loads are users) or record.ModeOpen.
	Mode string
	// Search bounds the loads probed and when the search ends.
	Search analyze.SearchOptions
	// SLOs must all hold at Confidence for a probe to pass: at least each
	// one's Share of measured requests meet its bounds (record.ParseSLO).
	SLOs []record.SLO
	// MaxFailureRate is the highest failure rate a passing probe may have
	// (default 0.01).
	MaxFailureRate float64
	// Confidence backs every percentile claim (default 0.95).
	Confidence float64
	// ProbeDuration is each probe's length, warm-up included.
	ProbeDuration time.Duration
	// Stage holds validity criteria (a probe must also be valid).
	Stage StageOptions
}

func (o CapacityOptions) withDefaults() CapacityOptions {
	if o.MaxFailureRate == 0 {
		o.MaxFailureRate = analyze.DefaultMaxFailureRate
	}
	if o.Confidence == 0 {
		o.Confidence = analyze.DefaultConfidence
	}
	o.Stage.Criteria.Confidence = o.Confidence
	return o
}

// FindCapacity searches for the highest load at which every SLO holds:
// it doubles the load from Search.Low until a probe fails, then bisects,
// then probes the answer Search.Confirm more times (a failed
// confirmation steps it back: analyze.NextLoad).
// Each probe is a stage of one run directory; a probe passes when, by the
// binomial rule, each SLO's percentile is within its bound at the stated
// confidence (too few samples never pass), the failure rate is within
// MaxFailureRate and the step is valid.
func FindCapacity(ctx context.Context, p *plan.Plan, opts Options, o CapacityOptions) (*Outcome, error) {
	o = o.withDefaults()
	if err := o.check(p); err != nil {
		return nil, err
	}
	d := o.design()
	return execute(ctx, p, opts, d, func(r *runner) (driver, error) {
		first := schedule.Stage{Kind: record.StepConstant, Mode: o.Mode, Duration: o.ProbeDuration, Target: o.Search.Low}
		if _, err := r.stageConfig(1, first); err != nil {
			return nil, err
		}
		return func(ctx context.Context, r *runner) error {
			return o.search(ctx, func(ctx context.Context, st schedule.Stage) (record.Step, *summary.StepAcc, error) {
				return r.runStaged(ctx, r.stages+1, st)
			}, d.Capacity)
		}, nil
	})
}

// design is the search's design: how its run directory judges the probes.
func (o CapacityOptions) design() summary.Design {
	return summary.Design{Kind: summary.KindCapacity, Criteria: o.Stage.Criteria, Capacity: &summary.CapacityJudging{
		Mode: o.Mode, SLOs: o.SLOs, MaxFailureRate: o.MaxFailureRate, Confidence: o.Confidence, Search: o.Search}}
}

// probeFunc runs one probe as the next stage of the search's run and
// returns its step and what its records folded into: the runner's
// stage over HTTP, or the virtual-time tests' simulator.
type probeFunc func(context.Context, schedule.Stage) (record.Step, *summary.StepAcc, error)

func (o CapacityOptions) check(p *plan.Plan) error {
	if o.Mode != record.ModeClosed && o.Mode != record.ModeOpen {
		return fmt.Errorf("capacity search: mode %q: want closed or open", o.Mode)
	}
	if !(o.Search.Low > 0) || o.Search.High < o.Search.Low {
		return fmt.Errorf("capacity search: loads %g..%g: want 0 < low ≤ high", o.Search.Low, o.Search.High)
	}
	if o.ProbeDuration <= 0 {
		return fmt.Errorf("capacity search: probe duration %s: want a positive duration", o.ProbeDuration)
	}
	if !(o.Confidence > 0 && o.Confidence < 1) {
		return fmt.Errorf("capacity search: confidence %v: want a fraction between 0 and 1", o.Confidence)
	}
	return checkWarmup(p, o.ProbeDuration)
}

// search probes until analyze.NextLoad has its answer. Each probe is
// judged from its records as Assemble will judge it (summary.JudgeProbe), so the
// loads it chooses and the answer in summary.json agree.
func (o CapacityOptions) search(ctx context.Context, probe probeFunc, c *summary.CapacityJudging) error {
	var passed, failed []float64
	for ctx.Err() == nil {
		load, done := analyze.NextLoad(passed, failed, o.Search)
		if done {
			break
		}
		st := schedule.Stage{Kind: record.StepConstant, Mode: o.Mode, Duration: o.ProbeDuration, Target: load}
		step, acc, err := probe(ctx, st)
		if err != nil {
			return fmt.Errorf("probe at %s: %w", st.Describe(), err)
		}
		if ctx.Err() != nil {
			break // a probe cut short proves nothing
		}
		if summary.JudgeProbe(c, &step, acc.Tallies()).Passed {
			passed = append(passed, load)
		} else {
			failed = append(failed, load)
		}
	}
	return nil
}
