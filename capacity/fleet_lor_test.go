package capacity_test

import (
	"slices"
	"testing"
	"time"

	"github.com/inferload/inferload/capacity"
	"github.com/inferload/inferload/sim"
)

// crowding is what one fleet simulation says about how a router places
// long prefills.
type crowding struct {
	// waiting is the mean number of requests still waiting for their
	// first token on the replica a request is sent to, as it arrives.
	waiting float64
	// p99 is the TTFT P99 of the measured requests.
	p99 time.Duration
}

// measureCrowding runs TestCompareRouters' conversations on n replicas
// behind router r for 3 simulated minutes after 10 s of warm-up.
func measureCrowding(t *testing.T, r capacity.Router, n int) crowding {
	t.Helper()
	w := fleetWorkload(t, conversations)
	prof, err := sim.LookupProfile(sim.DefaultProfile)
	if err != nil {
		t.Fatal(err)
	}
	const warmup = 10 * time.Second
	spec := capacity.FleetSpec{Profile: prof, ReadyAt: make([]time.Duration, n), Router: r,
		Request:     func(uint64) capacity.FleetRequest { return capacity.FleetRequest{} },
		UserRequest: capacity.UserRequests(w, prof.WithDefaults().BlockSize),
		Duration:    warmup + 3*time.Minute, Drain: time.Minute, Seed: w.Seed,
		Load: capacity.Load{Users: w.Users, Think: w.Think.Sample, ThinkMean: w.Think.Mean()}}
	type prefill struct{ arrival, first time.Duration }
	on := map[int][]prefill{}
	var ttft []time.Duration
	if _, err := capacity.RunFleet(spec, func(o *capacity.FleetOutcome) {
		if o.Err == nil && o.Arrival >= warmup {
			on[o.Replica] = append(on[o.Replica], prefill{o.Arrival, o.FirstToken})
			ttft = append(ttft, o.FirstToken-o.Arrival)
		}
	}); err != nil {
		t.Fatal(err)
	}
	waiting := 0
	for _, ps := range on {
		for _, p := range ps {
			for _, q := range ps {
				if q.arrival < p.arrival && p.arrival < q.first {
					waiting++
				}
			}
		}
	}
	slices.Sort(ttft)
	return crowding{waiting: float64(waiting) / float64(len(ttft)), p99: ttft[len(ttft)*99/100]}
}

// TestLeastOutstandingStacksPrefills is the evidence for why
// least-outstanding needs more replicas than round-robin for
// conversations (docs/capacity-planning.md): it counts requests, not
// the prefill work they bring, so a replica whose requests just finished
// takes the next arrivals one after another and their long prefills
// queue behind each other; round-robin never sends two arrivals in a row
// to one replica. At 15 replicas a least-outstanding arrival finds more
// prefills already waiting on its replica, and the TTFT tail is longer.
func TestLeastOutstandingStacksPrefills(t *testing.T) {
	t.Parallel()
	rr := measureCrowding(t, capacity.RoundRobin, 15)
	lor := measureCrowding(t, capacity.LeastOutstanding, 15)
	t.Logf("15 replicas: round-robin %.2f prefills waiting at arrival, TTFT p99 %v; least-outstanding %.2f, %v",
		rr.waiting, rr.p99, lor.waiting, lor.p99)
	if lor.waiting <= rr.waiting || lor.p99 <= rr.p99 {
		t.Errorf("least-outstanding %.2f waiting, p99 %v; round-robin %.2f, %v: want more of both", lor.waiting, lor.p99, rr.waiting, rr.p99)
	}
}
