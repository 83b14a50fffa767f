package capacity

// SimulateFleetSize simulates n replicas at o's planned load and says
// whether they pass, for the test that checks PlanFleet by brute force.
func SimulateFleetSize(o FleetOptions, n int) (bool, error) {
	f, err := newFleetSearch(o)
	if err != nil {
		return false, err
	}
	p, err := f.simulate(n, f.planned)
	if err != nil {
		return false, err
	}
	return p.passed(), nil
}
