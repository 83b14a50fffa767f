package experiment

import (
	"fmt"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/schedule"
)

// rateArrivals is the rate shape: an open loop of load.rate requests/s,
// spaced by load.arrival (Poisson, constant or gamma).
func rateArrivals(p *plan.Plan, cfg *engine.Config, _ *workloadFiles) error {
	return arrivalsAt(p, cfg, p.Load.Rate)
}

// computeArrivals is the compute shape: an open loop whose rate is
// load.flops_per_s ÷ the workload's mean FLOPs per request (flopsRate).
func computeArrivals(p *plan.Plan, cfg *engine.Config, _ *workloadFiles) error {
	return arrivalsAt(p, cfg, flopsRate(p.Load.FLOPsPerS, p.Compute.Model(), cfg.Source))
}

// arrivalsAt makes cfg an open loop of the plan's arrival process at rate
// requests/s, seeded by the workload's seed.
func arrivalsAt(p *plan.Plan, cfg *engine.Config, rate float64) error {
	l := p.Load
	arr, err := schedule.NewArrivals(l.Arrival, rate, l.Burstiness, p.Workload.Seed)
	if err != nil {
		return fmt.Errorf("load.arrival: %w", err)
	}
	cfg.Shape = openLoop(p, arr)
	return nil
}

// openLoop is an open loop of arr with the plan's in-flight cap, lateness
// bound and think time (a conversation's pause before its next turn, when
// some class has turns).
func openLoop(p *plan.Plan, arr engine.Arrivals) engine.OpenLoop {
	think, _ := thinkTime(p) // validated with the plan
	return engine.OpenLoop{Arrivals: arr, MaxInFlight: p.Load.MaxInFlight, LateAfter: p.Load.LateAfter, Think: think}
}
