package experiment

import (
	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
)

// judgeRun gives a single-phase run its validity verdict with the rules a
// sweep's steps get (analyze.Judge), from figures the records alone
// determine, so the live run and a rebuild agree. Staged runs are judged
// step by step instead.
func judgeRun(s *record.Summary, p *plan.Plan, agg *record.Aggregate, info record.RunInfo) error {
	if len(p.Load.Stages) > 0 {
		return nil
	}
	st := Stage{Kind: record.StepConstant, Mode: s.Mode, Target: intendedLoad(p)}
	step := stepFrom(s, 0, st, 0, 0)
	step.Validity.AchievedLoad = agg.AchievedLoad(info)
	if err := analyze.Judge(&step, analyze.Criteria{}); err != nil {
		return err
	}
	v := &step.Validity
	v.Classes = classBacking(s)
	if s.Client != nil && s.Client.Saturated && !v.ClientSaturated {
		v.ClientSaturated, v.Valid = true, false
		v.Reasons = append(v.Reasons, "the load generator itself was saturated (see client): the server saw less load than planned")
	}
	s.Validity = v
	return nil
}

// intendedLoad is the load a run means to apply, in AchievedLoad's unit,
// or 0 when there is none to hold it to: a replayed trace or compute pacing
// (their rate is not one number), or users who think between requests
// (fewer than all of them are in flight by design).
func intendedLoad(p *plan.Plan) float64 {
	l := p.Load
	switch {
	case l.Mode() == record.ModeOpen && (l.Trace.Path != "" || l.FLOPsPerS > 0):
		return 0
	case l.Mode() == record.ModeOpen:
		return l.Rate
	case l.ThinkTime != "":
		return 0
	}
	return float64(l.Concurrency)
}

// classBacking is, per request class, the highest percentile each latency
// metric's own sample count backs (absent with a single class).
func classBacking(s *record.Summary) map[string]map[string]string {
	if len(s.Classes) < 2 {
		return nil
	}
	const c = analyze.DefaultConfidence // what analyze.Judge backs percentiles at by default
	out := make(map[string]map[string]string, len(s.Classes))
	for name, b := range s.Classes {
		m := b.Metrics
		out[name] = map[string]string{
			"ttft": analyze.Backed(m.TTFT.Count, c), "itl": analyze.Backed(m.ITL.Count, c),
			"tpot": analyze.Backed(m.TPOT.Count, c), "e2e": analyze.Backed(m.E2E.Count, c),
		}
	}
	return out
}
