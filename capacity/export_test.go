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

// UserRequests is user u's k-th request as a fleet search over w renders
// it (nil when w has no conversations), for the test that conversations
// chain their turns' blocks.
func UserRequests(w FleetWorkload, blockSize int) func(u, k int) FleetRequest {
	r := newFleetRequests(&w, blockSize)
	if r.sessions == nil {
		return nil
	}
	return r.userRequest
}
