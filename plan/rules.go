package plan

import "github.com/inferload/inferload/record"

// Rules are the plan's rules for aggregating its records: input buckets,
// conversations, SLOs and the model's size. The summary
// (summary.NewAggregate) and the live page take them from here alone, so
// the page's tables and goodput read as summary.json's.
func (p *Plan) Rules() record.Rules {
	return record.Rules{InputBuckets: p.Workload.LengthBuckets, SessionTurns: p.SessionTurns(),
		SLOs: p.Workload.SLOs(), Model: p.Compute.Model()}
}
