package experiment

import (
	"context"
	"sync"
	"time"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/summary"
)

// running is a stage whose engine runs. Its records are collected on
// their own goroutine as they come, so that the next stage of a load
// change can start the moment this one stops issuing, while this one's
// last requests are still answered: the load has no hole. Every record
// still belongs to the stage that sent it (its step), and the stage's
// step is built once its last record is in (finish).
type running struct {
	st    stage
	eng   *engine.Engine
	base  uint64 // the stage's first request number
	offUS int64  // the stage's start on the run clock
	acc   *summary.StepAcc
	// ends are a closed loop's users' ends, which the next stage's users
	// wait for to take their place (engine.ClosedLoop.After).
	ends []chan struct{}
	// collected is closed once every record is in and the engine has
	// returned; endUS and interrupted are set before.
	collected   chan struct{}
	endUS       int64
	interrupted bool

	stopProgress func()
	stopAbort    func()
}

// issuingDone is closed once the stage stopped issuing: the next stage
// may start.
func (ru *running) issuingDone() <-chan struct{} { return ru.eng.IssuingDone() }

// collect moves each record of ru onto the run clock and into the run's
// files, the fold and the stage's step; r.collectMu keeps two stages'
// collectors (one draining, one starting) from interleaving a record.
func (r *runner) collect(ctx context.Context, ru *running, out <-chan *record.Result, engineDone <-chan struct{}) {
	for res := range out {
		res.ID = r.seg.Global(res.ID)
		if res.Turn > 0 {
			res.Session = r.seg.Global(res.Session) // a first turn's ID, numbered as IDs are
		}
		shift(res, ru.offUS, ru.base, ru.st.Index)
		r.collectMu.Lock()
		r.nextID = max(r.nextID, res.ID+1)
		r.rec.add(res, r.start)
		if r.spans != nil {
			r.spans.expect(res)
		}
		if ru.acc != nil {
			ru.acc.Add(res)
		}
		r.collectMu.Unlock()
	}
	<-engineDone
	ru.endUS = r.opts.clock().Now().Sub(r.start).Microseconds()
	ru.interrupted = ctx.Err() != nil
	close(ru.collected)
}

// reserveIDs numbers the next stage's requests after every request prev
// may still send: prev has stopped issuing, so its requests are all
// numbered below its Claimed, though not all have finished.
func (r *runner) reserveIDs(prev *running) {
	if prev == nil {
		return
	}
	r.collectMu.Lock()
	defer r.collectMu.Unlock()
	r.nextID = max(r.nextID, prev.base+prev.eng.Claimed())
}

// handOver makes a stage of a staged run take over from prev, the stage
// whose issuing just stopped: its schedule starts where prev's stopped
// (engine.Config.Origin); a closed loop's first users wait for
// prev's to end, each sending its next request as its last one is
// answered (the users both stages have go on; the ones prev had beyond
// them retire as their request in flight is answered, uncancelled), and
// the users it adds start at the spawn rate (schedule.SpawnRate). A ramp
// already adds its users gradually, at its own pace. prev is nil for the
// first stage and after a pause: every user is then added.
func (r *runner) handOver(cfg *engine.Config, st stage, prev *running) {
	if prev != nil {
		// The schedule goes on where prev's stopped: the time this
		// stage takes to start is the client's lag, not a pause in
		// the load.
		cfg.Origin = prev.eng.Started().Add(time.Duration(prev.eng.StoppedIssuingUS()) * time.Microsecond)
	}
	c, ok := cfg.Shape.(engine.ClosedLoop)
	if !ok || st.Index == 0 {
		return
	}
	c.Ends = make([]chan struct{}, c.Users)
	for u := range c.Ends {
		c.Ends[u] = make(chan struct{})
	}
	kept := 0
	if prev != nil {
		kept = min(len(prev.ends), c.Users)
		c.After = make([]<-chan struct{}, kept)
		for u := range kept {
			c.After[u] = prev.ends[u]
		}
	}
	if st.Load.Kind != record.StepRamp {
		rate := r.p.Load.SpawnRate
		if !r.seg.Whole() {
			rate /= float64(r.seg.Count) // each segment adds its share of the users
		}
		c.SpawnRate = schedule.SpawnRate(c.Users-kept, r.p.Load.Warmup, rate)
	}
	cfg.Shape = c
}

// once makes stop safe to call more than once: a stage's progress line
// ends when the next stage starts, or at its finish if none does.
func once(stop func()) func() { return sync.OnceFunc(stop) }
