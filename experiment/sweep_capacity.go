package experiment

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
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

// DefaultMaxFailureRate is CapacityOptions.MaxFailureRate when zero, and
// find-capacity's --max-failure-rate.
const DefaultMaxFailureRate = 0.01

func (o CapacityOptions) withDefaults() CapacityOptions {
	if o.MaxFailureRate == 0 {
		o.MaxFailureRate = DefaultMaxFailureRate
	}
	if o.Confidence == 0 {
		o.Confidence = analyze.DefaultConfidence
	}
	o.Stage.Criteria.Confidence = o.Confidence
	return o
}

// FindCapacity searches for the highest load at which every SLO holds:
// it doubles the load from Search.Low until a probe fails, then bisects.
// Each probe is a stage of one run directory; a probe passes when, by the
// binomial rule, each SLO's percentile is within its bound at the stated
// confidence (too few samples never pass), the failure rate is within
// MaxFailureRate and the step is valid.
func FindCapacity(ctx context.Context, p *plan.Plan, opts Options, o CapacityOptions) (*Outcome, error) {
	o = o.withDefaults()
	if err := o.check(p); err != nil {
		return nil, err
	}
	answer := &record.Capacity{Mode: o.Mode, Confidence: o.Confidence, MaxFailureRate: o.MaxFailureRate,
		SLOs: []string{}, Probes: []record.CapacityProbe{}}
	for _, b := range o.SLOs {
		answer.SLOs = append(answer.SLOs, b.String())
	}
	drive := func(ctx context.Context, r *stagedRun) error { return o.search(ctx, r, answer) }
	finish := func(s *record.Summary) { s.Capacity = answer }
	return runDriven(ctx, p, opts, o.Stage, drive, finish)
}

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

// search probes until analyze.NextLoad has its answer, then fills answer.
func (o CapacityOptions) search(ctx context.Context, r *stagedRun, answer *record.Capacity) error {
	var passed, failed []float64
	for ctx.Err() == nil {
		load, done := analyze.NextLoad(passed, failed, o.Search)
		if done {
			break
		}
		tallies := make([]analyze.Tally, len(o.SLOs))
		r.onResult = func(res *record.Result) { o.tally(res, tallies) }
		st := Stage{Kind: record.StepConstant, Mode: o.Mode, Duration: o.ProbeDuration, Target: load}
		step, err := r.runStage(ctx, len(r.steps)+1, st)
		if err != nil {
			return fmt.Errorf("probe at %s: %w", st.describe(), err)
		}
		r.steps = append(r.steps, step)
		if ctx.Err() != nil {
			break // a probe cut short proves nothing
		}
		probe := o.judge(&step, tallies)
		answer.Probes = append(answer.Probes, probe)
		if probe.Passed {
			passed = append(passed, load)
		} else {
			failed = append(failed, load)
		}
	}
	r.onResult = nil
	answer.Load = analyze.Capacity(passed, failed)
	answer.Found = answer.Load > 0
	answer.Reason = o.reason(answer, failed)
	return nil
}

// tally counts one measured record toward each SLO as goodput judges it
// (record.SLO.Judge): a failed request counts as exceeding every bound; a
// success no bound of the SLO applies to (no TPOT) is left out.
func (o CapacityOptions) tally(res *record.Result, tallies []analyze.Tally) {
	if res.Warmup {
		return
	}
	for i, b := range o.SLOs {
		met, judged := b.Judge(res)
		if !judged {
			continue
		}
		tallies[i].N++
		if !met {
			tallies[i].Exceed++
		}
	}
}

// judge decides one probe.
func (o CapacityOptions) judge(step *record.Step, tallies []analyze.Tally) record.CapacityProbe {
	probe := record.CapacityProbe{Step: step.Index, Load: step.Target, Passed: true, Reasons: []string{}}
	for i, b := range o.SLOs {
		v := analyze.CheckSLO(b, tallies[i], o.Confidence)
		probe.Passed = probe.Passed && v.Met
		probe.Reasons = append(probe.Reasons, v.Reason)
	}
	if step.FailureRate > o.MaxFailureRate {
		probe.Passed = false
		probe.Reasons = append(probe.Reasons, fmt.Sprintf("failure rate %.2f%% is above %.2f%%", step.FailureRate*100, o.MaxFailureRate*100))
	}
	if !step.Validity.Valid {
		probe.Passed = false
		probe.Reasons = append(probe.Reasons, "invalid step: "+strings.Join(step.Validity.Reasons, "; "))
	}
	return probe
}

// reason says the answer in words.
func (o CapacityOptions) reason(c *record.Capacity, failed []float64) string {
	objectives := strings.Join(append(append([]string{}, c.SLOs...), fmt.Sprintf("failure rate ≤ %.2g%%", o.MaxFailureRate*100)), ", ")
	unit := func(v float64) string { return (Stage{Mode: o.Mode, Target: v}).loadText() }
	switch {
	case len(c.Probes) == 0:
		return "no probe finished: the search was interrupted"
	case !c.Found:
		return fmt.Sprintf("even the lowest load, %s, missed: %s", unit(c.Probes[0].Load), strings.Join(c.Probes[0].Reasons, "; "))
	case len(failed) == 0:
		return fmt.Sprintf("every probe passed up to %s, the search's ceiling: capacity is at least that (%s at %.0f%% confidence)",
			unit(c.Load), objectives, o.Confidence*100)
	}
	return fmt.Sprintf("capacity %s: the highest load probed at which %s held at %.0f%% confidence; %d probes, the lowest failing load was %s",
		unit(c.Load), objectives, o.Confidence*100, len(c.Probes), unit(lowest(failed)))
}

func lowest(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}
