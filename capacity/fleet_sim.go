package capacity

import (
	"container/heap"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/inferload/inferload/sim"
)

// A fleet is N replicas of one engine behind a router, run on virtual
// time: the question a single measured server leaves open is how many of
// it a launch needs. Every replica is the same Engine the HTTP simulator
// and the reference table drive, so a fleet of one is that server.

// FleetRequest is what one request asks of the fleet.
type FleetRequest struct {
	// Class names the request class (records carry it).
	Class string
	// PromptTokens and OutputTokens are its lengths; the output is
	// generated exactly (as with ignore_eos).
	PromptTokens, OutputTokens int
	// BlockHashes are the prompt's chained block hashes (PromptHasher),
	// running on over the reply's blocks when a later turn carries the
	// reply (sim.Request's BlockHashes); requests sharing a prefix share
	// leading hashes, which the prefix router and each replica's prefix
	// cache use. nil opts out of both.
	BlockHashes []uint64
	// Affinity, when not 0, is the closed-loop user that sent it plus
	// one: the session router keeps a user's requests (its
	// conversations) on one replica.
	Affinity uint64
}

// Load is the fleet's offered load: either an open loop (Arrivals) or a
// closed loop of Users with think time.
type Load struct {
	// Arrivals, when set, gives the open loop's arrival instants in
	// ascending order (schedule's arrival processes fit).
	Arrivals interface{ Next() time.Duration }
	// Users is the closed loop's user count, each sending its next
	// request Think after its previous one finished; users start spread
	// evenly over the first Think mean (or together when it is 0).
	Users int
	// Think draws one think time; nil means none.
	Think func(*rand.Rand) time.Duration
	// ThinkMean spreads the users' first requests.
	ThinkMean time.Duration
	// StartAt, when set, is when user u sends its first request, instead
	// of the spread over ThinkMean (a ramp of users).
	StartAt func(u int) time.Duration
}

// FleetSpec is one fleet simulation.
type FleetSpec struct {
	// Profile is every replica's engine.
	Profile sim.Profile
	// ReadyAt holds one entry per replica: when it starts taking requests
	// (0 for replicas up from the start; a later instant for one started
	// during the run, cold start included).
	ReadyAt []time.Duration
	// Router picks a replica for each request.
	Router Router
	// Load is the offered load.
	Load Load
	// Request returns request i (0, 1, ...); it must be deterministic.
	Request func(i uint64) FleetRequest
	// UserRequest, when set, returns closed-loop user u's k-th request
	// (k = 0, 1, ...) instead: a user with a stream of its own (a
	// conversation whose turns carry its history) sends the same
	// requests whatever the fleet and its timing. Deterministic too.
	UserRequest func(u, k int) FleetRequest
	// Duration is when issuing stops; requests in flight then have Drain
	// longer to finish, after which they count as unfinished.
	Duration, Drain time.Duration
	// Seed drives think times and ties.
	Seed uint64
	// observe, when set, sees each replica's step as it starts (Fit
	// meters the KV cache with it).
	observe func(batchModel, *sim.StepResult)
}

// FleetOutcome is one request's fate. Times are on the fleet's clock
// from its start.
type FleetOutcome struct {
	Index   uint64
	Class   string
	Replica int // -1 when no replica was up to take it
	// Arrival is when the request was sent; FirstToken and LastToken are
	// 0 when no token came.
	Arrival, FirstToken, LastToken time.Duration
	PromptTokens, OutputTokens     int
	// Generated is the tokens emitted; TokenOffsets their arrival offsets
	// from Arrival.
	Generated    int
	TokenOffsets []time.Duration
	// CachedTokens is the replica's prefix-cache hit for the prompt.
	CachedTokens int
	// Err is nil on success; ErrTooLong, ErrQueueFull or ErrUnfinished
	// (still running when the drain ended) or ErrNoReplica otherwise.
	Err error
}

// Errors a fleet outcome can carry besides the engine's own.
var (
	// ErrUnfinished: the request was still in the fleet when the drain
	// after Duration ended (its client would have timed out).
	ErrUnfinished = errors.New("unfinished when the simulation ended")
	// ErrNoReplica: no replica was up when the request arrived.
	ErrNoReplica = errors.New("no replica up")
)

// ReplicaStats is one replica's share of a fleet run.
type ReplicaStats struct {
	// Requests routed to it.
	Requests int64
	// Busy is its engine's step time before Duration; Utilisation is
	// Busy over the time it was up until Duration.
	Busy        time.Duration
	Utilisation float64
	// Preemptions and prefix-cache hit tokens, from its engine.
	Preemptions, PrefixHitTokens int64
}

// FleetStats is the fleet's side of a run.
type FleetStats struct {
	Replicas []ReplicaStats
	// End is the virtual instant the simulation stopped.
	End time.Duration
}

// fleetSeq is the fleet's state of one request inside a replica.
type fleetSeq struct {
	out     FleetOutcome
	user    int // closed loop: the user that sent it; -1 in open loop
	replica int
}

type fleetRun struct {
	spec     FleetSpec
	engines  []batchModel
	pending  []*sim.StepResult // a replica's step in flight, applied at its end
	inflight []int             // requests routed and not finished, per replica
	stats    []ReplicaStats
	router   router
	events   eventHeap
	rng      *rand.Rand
	next     uint64 // the next request index
	live     map[*fleetSeq]*sim.Sequence
	emit     func(*FleetOutcome)
	up       []int // ready's buffer, reused for every arrival
	sent     []int // closed loop with UserRequest: requests each user sent
}

// RunFleet simulates spec and calls emit once per request, in completion
// order (unfinished ones last). emit may keep the outcome.
func RunFleet(spec FleetSpec, emit func(*FleetOutcome)) (FleetStats, error) {
	r, err := newFleetRun(spec, emit)
	if err != nil {
		return FleetStats{}, fmt.Errorf("fleet: %w", err)
	}
	r.start()
	end := r.loop()
	r.finishUnfinished()
	return r.fleetStats(end), nil
}

func (s FleetSpec) validate() error {
	switch {
	case len(s.ReadyAt) == 0:
		return errors.New("no replicas")
	case (s.Load.Arrivals == nil) == (s.Load.Users == 0):
		return errors.New("give either arrivals (open loop) or users (closed loop)")
	case s.Load.Users < 0:
		return fmt.Errorf("users %d: want >= 1", s.Load.Users)
	case s.Request == nil:
		return errors.New("no request source")
	case s.Duration <= 0 || s.Drain < 0:
		return fmt.Errorf("duration %s and drain %s: want > 0 and >= 0", s.Duration, s.Drain)
	}
	for i, t := range s.ReadyAt {
		if t < 0 {
			return fmt.Errorf("replica %d ready at %s: want >= 0", i, t)
		}
	}
	return nil
}

func newFleetRun(spec FleetSpec, emit func(*FleetOutcome)) (*fleetRun, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	rt, err := newRouter(spec.Router, spec.Profile.WithDefaults().BlockSize)
	if err != nil {
		return nil, err
	}
	n := len(spec.ReadyAt)
	r := &fleetRun{
		spec: spec, engines: make([]batchModel, n), pending: make([]*sim.StepResult, n),
		inflight: make([]int, n), stats: make([]ReplicaStats, n), router: rt,
		rng: rand.New(rand.NewPCG(spec.Seed, 0xf1ee7)), live: map[*fleetSeq]*sim.Sequence{}, emit: emit,
	}
	for i := range r.engines {
		if r.engines[i], err = newBatchModel(spec.Profile); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// start queues the first arrivals: the open loop's first instant, or each
// user's first request spread over the mean think time.
func (r *fleetRun) start() {
	if a := r.spec.Load.Arrivals; a != nil {
		r.pushArrival(a.Next(), -1)
		return
	}
	users := r.spec.Load.Users
	for u := range users {
		at := r.spec.Load.ThinkMean * time.Duration(u) / time.Duration(users)
		if r.spec.Load.StartAt != nil {
			at = r.spec.Load.StartAt(u)
		}
		r.pushArrival(at, u)
	}
}

func (r *fleetRun) pushArrival(at time.Duration, user int) {
	if at < r.spec.Duration {
		heap.Push(&r.events, event{at: at, kind: evArrival, who: user})
	}
}

// loop runs events in time order until none is left or the drain ends,
// and returns the instant it stopped.
func (r *fleetRun) loop() time.Duration {
	limit := r.spec.Duration + r.spec.Drain
	now := time.Duration(0)
	for r.events.Len() > 0 {
		ev := heap.Pop(&r.events).(event)
		if ev.at > limit {
			return limit
		}
		now = ev.at
		switch ev.kind {
		case evArrival:
			r.arrive(now, ev.who)
		case evStepEnd:
			r.stepEnd(now, ev.who)
		}
	}
	return now
}

// arrive sends the next request at now, routes it, and queues what comes
// after it in the open loop.
func (r *fleetRun) arrive(now time.Duration, user int) {
	if user < 0 {
		defer r.pushArrival(r.spec.Load.Arrivals.Next(), -1)
	}
	req := r.request(user)
	fs := &fleetSeq{user: user, replica: -1, out: FleetOutcome{Index: r.next, Class: req.Class, Replica: -1,
		Arrival: now, PromptTokens: req.PromptTokens, OutputTokens: req.OutputTokens}}
	r.next++
	k := r.router.pick(r.ready(now), r.inflight, req)
	if k < 0 {
		r.fail(now, fs, ErrNoReplica)
		return
	}
	fs.replica, fs.out.Replica = k, k
	seq, err := r.engines[k].Add(sim.Request{PromptTokens: req.PromptTokens, OutputTokens: req.OutputTokens,
		BlockHashes: req.BlockHashes, Ref: fs}, now)
	if err != nil {
		r.fail(now, fs, err)
		return
	}
	r.stats[k].Requests++
	r.inflight[k]++
	r.live[fs] = seq
	if r.pending[k] == nil {
		r.runStep(k, now)
	}
}

// request is the next request of user (-1: the open loop's next).
func (r *fleetRun) request(user int) FleetRequest {
	if user < 0 || r.spec.UserRequest == nil {
		return r.spec.Request(r.next)
	}
	if r.sent == nil {
		r.sent = make([]int, r.spec.Load.Users)
	}
	k := r.sent[user]
	r.sent[user]++
	return r.spec.UserRequest(user, k)
}

// ready lists the replicas up at now.
func (r *fleetRun) ready(now time.Duration) []int {
	r.up = r.up[:0]
	for i, t := range r.spec.ReadyAt {
		if t <= now {
			r.up = append(r.up, i)
		}
	}
	return r.up
}

// runStep starts replica k's next step at now, if it has work.
func (r *fleetRun) runStep(k int, now time.Duration) {
	e := r.engines[k]
	if !e.HasWork() {
		r.pending[k] = nil
		return
	}
	st := e.Step(now)
	if st.Idle() {
		// Work that cannot run now (waiting for KV blocks held by nothing
		// running cannot happen; this guards a stalled engine): retry
		// when the next request arrives.
		r.pending[k] = nil
		return
	}
	r.pending[k] = st
	if r.spec.observe != nil {
		r.spec.observe(e, st)
	}
	heap.Push(&r.events, event{at: st.End(), kind: evStepEnd, who: k})
}

// stepEnd applies replica k's step that ended at now: tokens reach their
// requests, finished ones are emitted and their users think, and the
// replica starts its next step.
func (r *fleetRun) stepEnd(now time.Duration, k int) {
	st := r.pending[k]
	if st.Start < r.spec.Duration {
		r.stats[k].Busy += min(st.End(), r.spec.Duration) - st.Start
	}
	for _, tok := range st.Tokens {
		fs := tok.Seq.Request().Ref.(*fleetSeq)
		fs.out.Generated++
		fs.out.TokenOffsets = append(fs.out.TokenOffsets, now-fs.out.Arrival)
		if tok.First {
			fs.out.FirstToken = now
			fs.out.CachedTokens = tok.Seq.CachedTokens()
		}
		fs.out.LastToken = now
		if tok.Final {
			r.inflight[k]--
			delete(r.live, fs)
			r.done(now, fs)
		}
	}
	r.runStep(k, now)
}

// fail emits a request that got no replica or was refused.
func (r *fleetRun) fail(now time.Duration, fs *fleetSeq, err error) {
	fs.out.Err = err
	r.done(now, fs)
}

// refusedBackoff is how long a closed-loop user whose request was
// refused outright (no replica up, queue full, too long) waits before its
// next one, besides its think time: a refusal costs no simulated time, so
// without it the user would retry in the same instant forever, and real
// clients back off too.
const refusedBackoff = time.Second

// done emits fs and, in a closed loop, sends its user's next request
// after a think time.
func (r *fleetRun) done(now time.Duration, fs *fleetSeq) {
	r.emit(&fs.out)
	if fs.user < 0 {
		return
	}
	think := time.Duration(0)
	if r.spec.Load.Think != nil {
		think = r.spec.Load.Think(r.rng)
	}
	if fs.out.Err != nil {
		think += refusedBackoff
	}
	r.pushArrival(now+think, fs.user)
}

// finishUnfinished emits what was still in the fleet when it stopped, in
// arrival order so the output is deterministic.
func (r *fleetRun) finishUnfinished() {
	left := make([]*fleetSeq, 0, len(r.live))
	for fs := range r.live {
		left = append(left, fs)
	}
	sortByIndex(left)
	for _, fs := range left {
		fs.out.Err = ErrUnfinished
		r.emit(&fs.out)
	}
}

func (r *fleetRun) fleetStats(end time.Duration) FleetStats {
	out := FleetStats{Replicas: r.stats, End: end}
	for k, e := range r.engines {
		c := e.Counters()
		s := &out.Replicas[k]
		s.Preemptions, s.PrefixHitTokens = c.Preemptions, c.PrefixHitTokens
		if up := r.spec.Duration - r.spec.ReadyAt[k]; up > 0 {
			s.Utilisation = float64(s.Busy) / float64(up)
		}
	}
	return out
}
