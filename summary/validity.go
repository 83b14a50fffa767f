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
	if p.Load.Shape() == plan.ShapeUsers && p.Load.ThinkTime != "" {
		return 0
	}
	return p.Load.Level()
}
