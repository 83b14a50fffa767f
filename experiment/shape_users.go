package experiment

import (
	"fmt"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/schedule"
)

// closedUsers is the users shape: load.concurrency closed-loop users, each
// thinking load.think_time between a reply and its next request.
func closedUsers(p *plan.Plan, cfg *engine.Config, _ *workloadFiles) error {
	think, err := thinkTime(p)
	if err != nil {
		return err
	}
	cfg.Shape = engine.ClosedLoop{Users: p.Load.Concurrency, Think: think}
	return nil
}

// thinkTime is the plan's think time, nil when its users do not think.
func thinkTime(p *plan.Plan) (engine.ThinkTime, error) {
	think, err := schedule.ParseThinkTime(p.Load.ThinkTime)
	if err != nil {
		return nil, fmt.Errorf("load.think_time: %w", err)
	}
	if think.IsZero() {
		return nil, nil
	}
	return think, nil
}
