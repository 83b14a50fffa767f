package capacity

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/inferload/inferload/sim"
)

// poissonArrivals is an open loop at rate per second, for tests.
type poissonArrivals struct {
	rng  *rand.Rand
	rate float64
	t    time.Duration
}

func (p *poissonArrivals) Next() time.Duration {
	p.t += time.Duration(p.rng.ExpFloat64() / p.rate * float64(time.Second))
	return p.t
}

// mixRequests draws request i's lengths from the reference mixes; with
// groups > 0 each prompt opens with one of groups shared 16-token blocks,
// drawn at random.
// groupBlocks is the blocks a prompt group of mixRequests shares.
const groupBlocks = 8

func mixRequests(prompts, outputs Mix, groups int) func(uint64) FleetRequest {
	p, err := prompts.dist()
	if err != nil {
		panic(err)
	}
	o, err := outputs.dist()
	if err != nil {
		panic(err)
	}
	return func(i uint64) FleetRequest {
		rng := rand.New(rand.NewPCG(i, 7))
		req := FleetRequest{PromptTokens: p.Sample(rng), OutputTokens: o.Sample(rng)}
		if groups > 0 {
			// The group's document fills the first groupBlocks blocks
			// (chained hashes: the group's own), the request's question
			// the rest.
			g := uint64(rng.IntN(groups)) + 1
			req.BlockHashes = make([]uint64, req.PromptTokens/16)
			for k := range req.BlockHashes {
				req.BlockHashes[k] = rng.Uint64() | 1
				if k < groupBlocks {
					req.BlockHashes[k] = g<<8 | uint64(k)<<1 | 1
				}
			}
		}
		return req
	}
}

func upFromStart(n int) []time.Duration { return make([]time.Duration, n) }

// runFleet runs spec and returns every outcome, copied.
func runFleet(t *testing.T, spec FleetSpec) ([]FleetOutcome, FleetStats) {
	t.Helper()
	var outs []FleetOutcome
	st, err := RunFleet(spec, func(o *FleetOutcome) { outs = append(outs, *o) })
	if err != nil {
		t.Fatal(err)
	}
	return outs, st
}

// TestFleetOfOneIsTheCalibratedServer: one replica under a closed loop
// delivers what the reference table's closed loop on the same engine does
// (same users, same length mixes, different draws), within 5%.
func TestFleetOfOneIsTheCalibratedServer(t *testing.T) {
	t.Parallel()
	spec := DefaultReference()
	spec.Concurrency = []int{100}
	spec.Warmup, spec.Duration = 30*time.Second, 2*time.Minute
	table, err := Reference(spec)
	if err != nil {
		t.Fatal(err)
	}
	outs, _ := runFleet(t, FleetSpec{
		Profile: spec.Profile, ReadyAt: upFromStart(1), Load: Load{Users: 100},
		Request: mixRequests(spec.Prompts, spec.Outputs, 0), Duration: spec.Warmup + spec.Duration, Seed: 1,
	})
	done := 0
	for _, o := range outs {
		if o.Err == nil && o.LastToken >= spec.Warmup && o.LastToken < spec.Warmup+spec.Duration {
			done++
		}
	}
	got, want := float64(done)/spec.Duration.Seconds(), table.Rows[0].Throughput
	if got < 0.95*want || got > 1.05*want {
		t.Errorf("fleet of one: %.2f req/s, reference table %.2f req/s: want within 5%%", got, want)
	}
}

// TestFleetRouters checks each router's promise on the same open loop.
func TestFleetRouters(t *testing.T) {
	t.Parallel()
	p, _ := sim.LookupProfile(sim.DefaultProfile)
	const groups = 61
	// Prompts of 192 and 256 tokens open with their group's 128-token
	// document: at least half of each prompt.
	requests := mixRequests(Mix{{192, 3}, {256, 1}}, Mix{{128, 1}}, groups)
	run := func(r Router) ([]FleetOutcome, FleetStats) {
		return runFleet(t, FleetSpec{
			Profile: p, ReadyAt: upFromStart(4), Router: r,
			Load:    Load{Arrivals: &poissonArrivals{rng: rand.New(rand.NewPCG(3, 3)), rate: 12}},
			Request: requests, Duration: time.Minute, Drain: time.Minute, Seed: 2,
		})
	}
	// Round-robin: the counts differ by at most one.
	_, st := run(RoundRobin)
	var counts []int64
	for _, s := range st.Replicas {
		counts = append(counts, s.Requests)
	}
	if slices.Max(counts)-slices.Min(counts) > 1 {
		t.Errorf("round-robin counts %v: want within one of each other", counts)
	}
	// Prefix-aware: each of 61 prompt groups stays on few replicas (round-
	// robin sends every group to all 4), so the fleet's prefix caches
	// miss each group's document fewer times.
	replicasPerGroup := func(outs []FleetOutcome) float64 {
		on := map[uint64]map[int]bool{}
		for _, o := range outs {
			g := requests(o.Index).BlockHashes[0]
			if on[g] == nil {
				on[g] = map[int]bool{}
			}
			on[g][o.Replica] = true
		}
		n := 0
		for _, rs := range on {
			n += len(rs)
		}
		return float64(n) / float64(len(on))
	}
	outs, stPrefix := run(PrefixAware)
	outsRR, stRR := run(RoundRobin)
	if p, rr := replicasPerGroup(outs), replicasPerGroup(outsRR); p > 2.5 || rr < 3.5 {
		t.Errorf("replicas per prefix group: prefix router %.2f, round-robin %.2f; want at most 2.5 and at least 3.5", p, rr)
	}
	hits := func(st FleetStats) (n int64) {
		for _, s := range st.Replicas {
			n += s.PrefixHitTokens
		}
		return n
	}
	if hits(stPrefix) <= hits(stRR) {
		t.Errorf("prefix hits: prefix router %d tokens, round-robin %d: want more", hits(stPrefix), hits(stRR))
	}
}

// TestRouterPicks pins each router's choice on hand-made states.
func TestRouterPicks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		router   Router
		up       []int
		inflight []int
		req      FleetRequest
		want     int
	}{
		// Nothing up: nowhere to send it.
		{"none up", LeastOutstanding, nil, []int{0, 0}, FleetRequest{}, -1},
		// The emptiest replica wins.
		{"least", LeastOutstanding, []int{0, 1, 2}, []int{3, 1, 2}, FleetRequest{}, 1},
		// A replica not yet up is never chosen, however idle.
		{"least skips down", LeastOutstanding, []int{0, 1}, []int{3, 2, 0}, FleetRequest{}, 1},
		// User 5 (affinity 6) of 4 replicas up goes to the second: 5 mod 4.
		{"session sticks", Sticky, []int{0, 1, 2, 3}, []int{0, 9, 0, 0}, FleetRequest{Affinity: 6}, 1},
		// Over the replicas up: 5 mod 2 is the second of {0, 3}.
		{"session over up", Sticky, []int{0, 3}, []int{0, 0, 0, 0}, FleetRequest{Affinity: 6}, 3},
		// No affinity (an open loop's request): round-robin's first pick.
		{"session without affinity", Sticky, []int{2, 3}, []int{0, 0, 0, 0}, FleetRequest{}, 2},
	}
	for _, tt := range tests {
		r, err := newRouter(tt.router, 16)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.pick(tt.up, tt.inflight, tt.req); got != tt.want {
			t.Errorf("%s: picked %d, want %d", tt.name, got, tt.want)
		}
	}
	if _, err := newRouter("random", 16); err == nil {
		t.Error("router random: want an error naming the routers")
	}
}

// TestFleetColdStart: a replica that starts late gets nothing before it
// is up; with no replica up, requests fail as ErrNoReplica.
func TestFleetColdStart(t *testing.T) {
	t.Parallel()
	p, _ := sim.LookupProfile("tiny")
	ready := []time.Duration{0, 20 * time.Second}
	outs, st := runFleet(t, FleetSpec{
		Profile: p, ReadyAt: ready, Router: LeastOutstanding,
		Load:    Load{Arrivals: &poissonArrivals{rng: rand.New(rand.NewPCG(1, 1)), rate: 5}},
		Request: mixRequests(Mix{{64, 1}}, Mix{{16, 1}}, 0), Duration: 40 * time.Second, Drain: time.Minute,
	})
	for _, o := range outs {
		if o.Replica == 1 && o.Arrival < ready[1] {
			t.Fatalf("request %d reached replica 1 at %s, before it was up at %s", o.Index, o.Arrival, ready[1])
		}
	}
	if st.Replicas[1].Requests == 0 {
		t.Error("replica 1 took no request after it came up")
	}
	outs, _ = runFleet(t, FleetSpec{
		Profile: p, ReadyAt: []time.Duration{time.Hour}, Load: Load{Users: 2},
		Request: mixRequests(Mix{{64, 1}}, Mix{{16, 1}}, 0), Duration: time.Second,
	})
	for _, o := range outs {
		if !errors.Is(o.Err, ErrNoReplica) {
			t.Fatalf("request %d with no replica up: %v, want ErrNoReplica", o.Index, o.Err)
		}
	}
}

// TestFleetOverloadLeavesUnfinished: an open loop far past one replica's
// capacity leaves requests in flight at the end of the drain, and each is
// emitted once as ErrUnfinished.
func TestFleetOverloadLeavesUnfinished(t *testing.T) {
	t.Parallel()
	p, _ := sim.LookupProfile(sim.DefaultProfile)
	outs, _ := runFleet(t, FleetSpec{
		Profile: p, ReadyAt: upFromStart(1),
		Load:    Load{Arrivals: &poissonArrivals{rng: rand.New(rand.NewPCG(5, 5)), rate: 40}},
		Request: mixRequests(Mix{{1024, 1}}, Mix{{256, 1}}, 0), Duration: 30 * time.Second, Drain: 5 * time.Second,
	})
	seen, unfinished := map[uint64]bool{}, 0
	for _, o := range outs {
		if seen[o.Index] {
			t.Fatalf("request %d emitted twice", o.Index)
		}
		seen[o.Index] = true
		if errors.Is(o.Err, ErrUnfinished) {
			unfinished++
		}
	}
	if unfinished == 0 {
		t.Errorf("40 req/s of 1024+256 tokens on one replica left nothing unfinished (%d requests)", len(outs))
	}
	if len(seen) != int(maxIndex(outs))+1 {
		t.Errorf("%d outcomes for indices up to %d: some request was lost", len(seen), maxIndex(outs))
	}
}

func maxIndex(outs []FleetOutcome) (m uint64) {
	for _, o := range outs {
		m = max(m, o.Index)
	}
	return m
}

// TestFleetIsDeterministic: the same spec gives the same outcomes.
func TestFleetIsDeterministic(t *testing.T) {
	t.Parallel()
	p, _ := sim.LookupProfile("tiny")
	spec := func() FleetSpec {
		return FleetSpec{Profile: p, ReadyAt: upFromStart(3), Router: LeastOutstanding,
			Load:    Load{Users: 20, Think: func(r *rand.Rand) time.Duration { return time.Duration(r.IntN(500)) * time.Millisecond }, ThinkMean: 250 * time.Millisecond},
			Request: mixRequests(Mix{{64, 1}, {512, 1}}, Mix{{16, 1}, {64, 1}}, 0), Duration: 20 * time.Second, Seed: 9}
	}
	a, _ := runFleet(t, spec())
	b, _ := runFleet(t, spec())
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs of one fleet spec differ")
	}
}

// TestFleetSpecErrors: a spec that cannot run says why.
func TestFleetSpecErrors(t *testing.T) {
	t.Parallel()
	p, _ := sim.LookupProfile("tiny")
	req := mixRequests(Mix{{64, 1}}, Mix{{16, 1}}, 0)
	bad := []FleetSpec{
		{Profile: p, Load: Load{Users: 1}, Request: req, Duration: time.Second},                             // no replicas
		{Profile: p, ReadyAt: upFromStart(1), Request: req, Duration: time.Second},                          // no load
		{Profile: p, ReadyAt: upFromStart(1), Load: Load{Users: 1}, Duration: time.Second},                  // no requests
		{Profile: p, ReadyAt: upFromStart(1), Load: Load{Users: 1}, Request: req},                           // no duration
		{Profile: p, ReadyAt: upFromStart(1), Load: Load{Users: 1}, Request: req, Duration: 1, Router: "x"}, // bad router
	}
	for i, s := range bad {
		if _, err := RunFleet(s, func(*FleetOutcome) {}); err == nil {
			t.Errorf("spec %d: want an error", i)
		}
	}
}

// BenchmarkFleet simulates 2,000 users (5 s think time) on 32 replicas of
// the default preset for 10 virtual minutes: the cost of one fleet size
// in `inferload fleet`'s search, requests drawn from a mix.
func BenchmarkFleet(b *testing.B) {
	p, _ := sim.LookupProfile(sim.DefaultProfile)
	reqs := mixRequests(Mix{{512, 1}}, Mix{{256, 1}}, 0)
	think := func(*rand.Rand) time.Duration { return 5 * time.Second }
	var n int
	for range b.N {
		n = 0
		_, err := RunFleet(FleetSpec{Profile: p, ReadyAt: upFromStart(32), Router: LeastOutstanding,
			Load:    Load{Users: 2000, Think: think, ThinkMean: 5 * time.Second},
			Request: reqs, Duration: 10 * time.Minute}, func(*FleetOutcome) { n++ })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "requests/op")
}
