package capacity

import (
	"cmp"

	"github.com/inferload/inferload/record"
)

// PlanFleetRouters answers PlanFleet's question behind o.Router, then
// asks it again behind each of routers (default Routers()) with the same
// workload, load and SLOs, and lists each answer in the result's
// Routers: how many replicas each router needs at the SLO, the first
// SLO's figure at that size and the share of prompt tokens the prefix
// caches served. The searches share one rendering of the workload, so
// every router is offered byte-identical requests.
func PlanFleetRouters(o FleetOptions, routers []Router) (*record.Fleet, error) {
	if len(routers) == 0 {
		routers = Routers()
	}
	for _, r := range routers {
		if _, err := newRouter(r, 1); err != nil {
			return nil, err
		}
	}
	main, err := newFleetSearch(o)
	if err != nil {
		return nil, err
	}
	answer, err := main.search()
	if err != nil {
		return nil, err
	}
	own := cmp.Or(o.Router, RoundRobin)
	for _, r := range routers {
		got := answer
		if cmp.Or(r, RoundRobin) != own {
			other := *main
			other.o.Router, other.probes = r, map[int]*fleetProbe{}
			if got, err = other.search(); err != nil {
				return nil, err
			}
		}
		answer.Routers = append(answer.Routers, routerRow(got, o.SLOs))
	}
	return answer, nil
}

// routerRow is one router's answer as the comparison shows it, read at
// the answer's size or, when no size passed, at the largest one tried.
func routerRow(f *record.Fleet, slos []record.SLO) record.FleetRouter {
	row := record.FleetRouter{Router: f.Router, Replicas: f.Replicas, Reason: f.Reason}
	var at *record.FleetProbe
	for i := range f.Probes {
		if p := &f.Probes[i]; p.Replicas == f.Replicas || f.Replicas == 0 {
			at = p
		}
	}
	if at == nil {
		return row
	}
	row.PrefixHitShare = at.PrefixHitShare
	if len(slos) > 0 {
		row.Figure, row.FigureMS = sloFigure(slos[0], at.Metrics)
	}
	return row
}

// sloFigure is the metric s bounds first (TTFT, TTFO, TPOT, E2E, the
// order SLO.String names them) at s's percentile, and its value in m.
func sloFigure(s record.SLO, m record.Metrics) (string, float64) {
	p := s.Percentile()
	ttfo := record.Stats{}
	if m.TTFO != nil {
		ttfo = *m.TTFO
	}
	for _, b := range []struct {
		name  string
		bound float64
		stats record.Stats
	}{{"TTFT", s.TTFTMs, m.TTFT}, {"TTFO", s.TTFOMs, ttfo}, {"TPOT", s.TPOTMs, m.TPOT}, {"E2E", s.E2EMs, m.E2E}} {
		if b.bound > 0 {
			v, _ := b.stats.At(p)
			return b.name + " " + p, v
		}
	}
	return "", 0
}
