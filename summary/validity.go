package summary

import (
	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
)

// runLoad is the load analyze.Diagnose judges a single-phase run's
// validity by, from figures the records alone determine; nil for a staged
// run, judged step by step instead.
func runLoad(p *plan.Plan, d Design, agg *record.Aggregate, info record.RunInfo) *analyze.RunLoad {
	if d.staged() {
		return nil
	}
	return &analyze.RunLoad{Intended: intendedLoad(p), Achieved: agg.AchievedLoad(info)}
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
