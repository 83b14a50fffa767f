package experiment

import (
	"fmt"
	"math"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
)

// stageShape is the shape of one stage of a staged run (load.stages, a
// sweep's step, a capacity probe, a steered level): in a closed loop the
// stage's users, with the plan's think time, ramped linearly over a ramp
// stage; in an open loop the plan's arrival process at the stage's rate
// (seeded by the stage's seed), or a linear ramp of the rate. The plan's
// in-flight cap and lateness bound apply to every open stage.
func stageShape(p *plan.Plan, st schedule.Stage, seed uint64) (engine.Shape, error) {
	if st.Mode == record.ModeClosed {
		think, err := thinkTime(p)
		if err != nil {
			return nil, err
		}
		c := engine.ClosedLoop{Users: int(math.Max(st.From, st.Target)), Think: think}
		if st.Kind == record.StepRamp {
			c.Active = schedule.RampUsers(st.From, st.Target, st.Duration)
		}
		return c, nil
	}
	if st.Kind == record.StepRamp {
		return openLoop(p, schedule.NewRampArrivals(st.From, st.Target, st.Duration)), nil
	}
	arr, err := schedule.NewArrivals(p.Load.ArrivalProcess(), st.Target, p.Load.Burstiness, seed)
	if err != nil {
		return nil, fmt.Errorf("load.arrival: %w", err)
	}
	return openLoop(p, arr), nil
}
