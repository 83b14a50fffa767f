package summary

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
)

// NewAggregate is an aggregate that judges and breaks down records as the
// plan says (plan.Plan.Rules: its input buckets, conversations, SLOs and
// model size). The run, each step and every rebuild start from it.
func NewAggregate(p *plan.Plan) *record.Aggregate {
	agg := record.NewAggregate()
	agg.SetRules(p.Rules())
	return agg
}

// StepAcc folds one stage's records: its aggregate and, in a capacity
// search, each SLO's analyze.CountSLOsInOrder.
type StepAcc struct {
	agg     *record.Aggregate
	slos    []record.SLO
	tallies []analyze.Tally
	// doneUS and ttftUS are each successful reply's end and TTFT, for
	// the steady-state rule (analyze.JudgeSteady) once the window is
	// known.
	doneUS, ttftUS []int64
}

func NewStepAcc(p *plan.Plan, d Design) *StepAcc {
	a := &StepAcc{agg: NewAggregate(p)}
	if d.Capacity != nil {
		a.slos = d.Capacity.SLOs
		a.tallies = make([]analyze.Tally, len(a.slos))
	}
	return a
}

// Add folds in one record of the stage.
func (a *StepAcc) Add(r *record.Result) {
	a.agg.Add(r)
	analyze.CountSLOsInOrder(r, a.slos, a.tallies)
	if r.OK() {
		a.doneUS, a.ttftUS = append(a.doneUS, r.DoneUS()), append(a.ttftUS, r.TTFTUS)
	}
}

// FailureRate is the stage's failure rate over the records folded so
// far, as its step will count it (record.Summary.FailureRate).
func (a *StepAcc) FailureRate() float64 {
	return a.agg.Summary(record.RunInfo{}).FailureRate
}

// Tallies are the stage's SLO tallies so far, one per SLO of the capacity
// search (none in other designs).
func (a *StepAcc) Tallies() []analyze.Tally { return a.tallies }

// BuildStep is a stage's step: the figures of its records over its own
// window, the load it achieved (from the same records) and its validity.
// The live run and Assemble both call it, on the same records.
func BuildStep(acc *StepAcc, m record.StageMark, p *plan.Plan, d Design) (record.Step, error) {
	info := m.RunInfo()
	s := acc.agg.Summary(info)
	s.Warnings = analyze.Warnings(s, d.Criteria)
	step := record.Step{
		Index: m.Index, Kind: m.Kind, Mode: m.Mode, Target: m.Target, From: m.From,
		StartS: float64(m.StartUS) / 1e6, WindowS: s.WindowS, Requests: s.Requests,
		FailureRate: s.FailureRate, Errors: s.Errors, Metrics: s.Metrics, Throughput: s.Throughput,
		GoodputPerS: s.Goodput.RequestsPerS, Warnings: s.Warnings, ServerTime: s.ServerTime,
		Accuracy: s.Accuracy,
	}
	if m.Kind != record.StepRamp {
		step.From = 0
	}
	step.Validity.AchievedLoad = acc.agg.AchievedLoad(info)
	judged := step
	if m.Mode == record.ModeClosed && p.Load.ThinkTime != "" {
		// Users who think between requests are not all in flight by
		// design: there is no intended in-flight count to hold them to.
		judged.Target, judged.From = 0, 0
	}
	if err := analyze.Judge(&judged, d.Criteria); err != nil {
		return record.Step{}, err
	}
	analyze.JudgeSteady(&judged, analyze.SecondsOf(acc.doneUS, acc.ttftUS, m.WarmupEndUS, m.MeasureEndUS))
	step.Validity = judged.Validity
	return step, nil
}

// kneeOf runs knee detection over the steps of the design's mode. With
// SLOs judged (bySLO) the operating point is theirs, and the knee's
// reason says so instead of recommending its own fraction.
func kneeOf(steps []record.Step, kd *KneeDesign, bySLO bool) *record.Knee {
	var in []record.Step
	for _, st := range steps {
		if st.Mode == kd.Mode {
			in = append(in, st)
		}
	}
	o := kd.Options
	o.BySLO = bySLO
	k, err := analyze.FindKnee(in, o)
	if err != nil {
		k.Reason = err.Error()
	}
	k.Mode = kd.Mode
	return &k
}

// JudgeProbe decides one probe of a capacity search: every SLO held at
// the confidence, the failure rate is within bounds and the step is valid.
// A sweep's step that missed nothing but could not pass (too few samples
// for an objective, or invalid) has no verdict: a sweep cannot lengthen
// it, and counting it as a miss would put the answer below a load that
// was never shown to fail.
func JudgeProbe(c *CapacityJudging, step *record.Step, tallies []analyze.Tally) record.CapacityProbe {
	j := c.Rule().Judge(step.FailureRate, tallies)
	probe := record.CapacityProbe{Step: step.Index, Load: step.Target, Passed: j.Passed, Reasons: j.Reasons}
	if !step.Validity.Valid {
		probe.Passed = false
		probe.Reasons = append(probe.Reasons, "invalid step: "+strings.Join(step.Validity.Reasons, "; "))
	}
	probe.NoVerdict = c.Sweep && !probe.Passed && !j.Missed
	return probe
}

// Rule is the capacity rule c judges each probe by.
func (c *CapacityJudging) Rule() analyze.ProbeRule {
	return analyze.ProbeRule{SLOs: c.SLOs, Confidence: c.Confidence, MaxFailureRate: c.MaxFailureRate}
}

// capacityOf is a capacity search's answer from its steps: each step of
// its loop that ran to its end is a probe (a probe cut short proves
// nothing), but for a sweep's baseline.
func capacityOf(c *CapacityJudging, steps []record.Step, marks []record.StageMark, accs map[int]*StepAcc) *record.Capacity {
	answer := &record.Capacity{Mode: c.Mode, Confidence: c.Confidence, MaxFailureRate: c.MaxFailureRate,
		SLOs: []string{}, Probes: []record.CapacityProbe{}}
	for _, b := range c.SLOs {
		answer.SLOs = append(answer.SLOs, b.String())
	}
	for i := range steps {
		if marks[i].Interrupted || steps[i].Index == c.Baseline || steps[i].Mode != c.Mode {
			continue
		}
		answer.Probes = append(answer.Probes, JudgeProbe(c, &steps[i], accs[steps[i].Index].tallies))
	}
	passed, failed := answer.Verdicts()
	answer.Load = analyze.Capacity(passed, failed)
	answer.Found = answer.Load > 0
	if !c.Sweep {
		markConfirmations(answer, passed, c.Search.Confirm)
	}
	answer.Reason = capacityReason(c, answer, failed) + confirmationReason(c, answer)
	return answer
}

// capacityReason says the answer in words.
func capacityReason(o *CapacityJudging, c *record.Capacity, failed []float64) string {
	objectives := strings.Join(append(append([]string{}, c.SLOs...), fmt.Sprintf("failure rate ≤ %.2g%%", o.MaxFailureRate*100)), ", ")
	unit := func(v float64) string { return record.LoadText(v, o.Mode) }
	probes, ceiling := "probes", "the search's ceiling"
	if o.Sweep {
		probes, ceiling = "steps", "the sweep's highest load"
	}
	switch {
	case len(c.Probes) == 0:
		return fmt.Sprintf("no %s finished: the run was interrupted", probes)
	case len(failed) == 0 && !c.Found:
		return fmt.Sprintf("no verdict: none of the %d %s could show %s held or missed (too few samples, or invalid)", len(c.Probes), probes, objectives)
	case !c.Found:
		// The first failure at the lowest failing load: with
		// confirmations, a probe there may have passed before it.
		low := slices.Min(failed)
		first := c.Probes[slices.IndexFunc(c.Probes, func(p record.CapacityProbe) bool { return !p.NoVerdict && !p.Passed && p.Load == low })]
		return fmt.Sprintf("even the lowest load, %s, missed: %s", unit(first.Load), strings.Join(first.Reasons, "; "))
	case len(failed) == 0:
		return fmt.Sprintf("every one of the %d %s passed up to %s, %s: capacity is at least that (%s at %.0f%% confidence)",
			len(c.Probes), probes, unit(c.Load), ceiling, objectives, o.Confidence*100)
	}
	reason := fmt.Sprintf("capacity %s: the highest load probed at which %s held at %.0f%% confidence; %d %s, the lowest failing load was %s",
		unit(c.Load), objectives, o.Confidence*100, len(c.Probes), probes, unit(slices.Min(failed)))
	if !o.Sweep && budgetCut(o.Search, len(c.Probes), c.Load, slices.Min(failed)) {
		reason += fmt.Sprintf("; the probe budget (%d) ran out before the %.0f%% precision: the capacity lies between %s and %s (raise --max-probes for a closer answer)",
			len(c.Probes), precision(o.Search)*100, unit(c.Load), unit(slices.Min(failed)))
	}
	return reason
}

// budgetCut reports whether a search stopped on its probe budget with its
// bracket [pass, fail) still wider than its precision.
func budgetCut(s analyze.SearchOptions, probes int, pass, fail float64) bool {
	return probes >= s.Budget() && pass > 0 && fail/pass > 1+precision(s) && !(s.Whole && fail-pass <= 1)
}

func precision(s analyze.SearchOptions) float64 {
	return cmp.Or(s.Precision, analyze.DefaultSearch.Precision)
}
