package experiment

import (
	"errors"
	"time"

	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/schedule"
)

// withRunSalt is p with its prompt salt resolved for this run
// (plan.Workload.RunSalt): every stage of the run sends it, and the run
// directory's plan.yaml records it, so a plan naming it replays the run's
// prompts. A segment of a distributed run derives it from the name the
// segments share, so all of them send one salt; p itself is left as it
// is, so running it again draws another.
func withRunSalt(p *plan.Plan, seg schedule.Segment, opts Options) (*plan.Plan, error) {
	if p.Workload.Salt != plan.SaltRun {
		return p, nil
	}
	key := ""
	if !seg.Whole() {
		if key = sharedRunName(p, opts); key == "" {
			return nil, errors.New("workload.salt: a segment (load.segment) without a common start cannot share its run's salt with the " +
				"other segments: start them together (--start-at or --collector), or set workload.salt to one word for all of them (or off)")
		}
	}
	q := *p
	q.Workload.Salt = p.Workload.RunSalt(key)
	return &q, nil
}

// sharedRunName is what the segments of one run have in common: the
// trace name the CLI gives them (the plan's name and the collector's or
// --start-at's instant), else the plan's name and the common start; ""
// without a common start.
func sharedRunName(p *plan.Plan, opts Options) string {
	switch {
	case opts.TraceRun != "":
		return opts.TraceRun
	case !opts.StartAt.IsZero():
		return p.Name + "@" + opts.StartAt.UTC().Format(time.RFC3339Nano)
	}
	return ""
}
