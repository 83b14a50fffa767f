package experiment

import (
	"fmt"
	"time"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/workload"
)

// traceReplay is the trace shape: cfg replays the plan's trace, an open
// loop whose arrivals are its timestamps and whose requests have its
// lengths (and, in a Mooncake, Dynamo or Weka trace, its prompt blocks); an
// agent trace's sessions are replayed as sessions (engine.Replay). A trace that
// plays once caps the phase at its length unless a duration is set (the
// phase then lasts it).
func traceReplay(p *plan.Plan, cfg *engine.Config, files *workloadFiles) error {
	t := p.Load.Trace
	tr, err := schedule.LoadTrace(t.Path, schedule.TraceOptions{Format: t.Format, Speed: t.Speed, Loop: t.Loop,
		MaxGap: t.MaxGap, BlockTokens: t.BlockTokens, Context: files.context()})
	if err != nil {
		return fmt.Errorf("load.trace: %w", err)
	}
	gen, err := traceGenerator(p, files, tr)
	if err != nil {
		return err
	}
	cfg.Shape = openLoop(p, tr)
	cfg.Source = newTraceSource(gen, tr)
	if tr.Sessions() != nil {
		if p.Load.MaxInFlight > 0 {
			return fmt.Errorf("load.max_in_flight: does not apply to an agent trace (%s): its sessions send one call at a time, each after the reply before it", tr.Format())
		}
		cfg.Shape = replayShape(p, tr)
		cfg.Source = traceSessions{newTraceSource(gen, tr)}
	}
	if p.Load.PlaysOnce() && cfg.Duration == 0 && (cfg.Requests == 0 || cfg.Requests > tr.Len()) {
		cfg.Requests = tr.Len()
	}
	return nil
}

// traceGenerator builds the synthetic prompts of the default class, whose
// lengths the trace overrides; a trace with hash ids (Mooncake, Dynamo, Weka)
// has prompts made of its hash blocks.
func traceGenerator(p *plan.Plan, files *workloadFiles, tr *schedule.Trace) (*workload.Generator, error) {
	mix, err := p.Workload.MixConfig()
	if err != nil {
		return nil, err
	}
	if err := files.attach(p, &mix); err != nil {
		return nil, err
	}
	cfg := mix.Classes[0].GeneratorConfig(mix.Seed, mix.Salt)
	cfg.BlockTokens = tr.BlockTokens()
	return workload.NewGenerator(cfg)
}

// traceSource gives request i the lengths the trace recorded for it, and
// the blocks its prompt is made of and the share of them an earlier
// request sent, when the trace names blocks.
type traceSource struct {
	gen   *workload.Generator
	trace *schedule.Trace
	// reuse is each entry's reused tokens in the first pass, and in every
	// later pass of a looping trace; empty without blocks.
	reuse, reuseLater []int
}

// newTraceSource counts each entry's reuse once, in replay order, so a
// spec stays a pure function of its index.
func newTraceSource(gen *workload.Generator, tr *schedule.Trace) traceSource {
	s := traceSource{gen: gen, trace: tr}
	if tr.BlockTokens() == 0 {
		return s
	}
	reqs := make([]workload.BlockRequest, tr.Len())
	for k := range reqs {
		e := tr.Entry(k)
		reqs[k] = workload.BlockRequest{InputTokens: e.InputTokens, IDs: e.HashIDs}
	}
	s.reuse, s.reuseLater = gen.BlockReuse(reqs)
	return s
}

func (s traceSource) Spec(i uint64) workload.Spec {
	e := s.trace.Request(i)
	spec := s.gen.SpecOfBlocks(i, e.InputTokens, e.OutputTokens, e.HashIDs)
	if n := uint64(len(s.reuse)); n > 0 {
		spec.ReuseTokens = s.reuse[i%n]
		if i >= n {
			spec.ReuseTokens = s.reuseLater[i%n]
		}
	}
	return spec
}

// replayShape is an agent trace's sessions as an engine.Replay: a root
// session starts at its first call's offset, a subagent after its
// parent's call, and every later call the recorded delay after the reply
// before it (and after the subagents it joins); the sessions under one
// root share an affinity.
func replayShape(p *plan.Plan, tr *schedule.Trace) engine.Replay {
	sessions := tr.Sessions()
	r := engine.Replay{Sessions: make([]engine.ReplaySession, len(sessions)), LateAfter: p.Load.LateAfter}
	for s, ts := range sessions {
		rs := engine.ReplaySession{Start: tr.Entry(ts.Calls[0]).At, Parent: -1,
			Delays: make([]time.Duration, len(ts.Calls)), Joins: ts.Joins, Group: uint64(ts.Root)}
		if ts.ParentCall >= 0 {
			rs.Parent, rs.ParentCall = ts.Parent, ts.ParentCall
		}
		for k, c := range ts.Calls {
			rs.Delays[k] = tr.Entry(c).Delay
		}
		r.Sessions[s] = rs
	}
	return r
}

// traceSessions is a traceSource whose sessions are an agent trace's:
// session s's k-th request is its k-th recorded call, built from the
// call's entry (so its prompt is the same whatever order the run
// numbers the calls in), marked as turn k of the session's calls.
type traceSessions struct{ traceSource }

func (t traceSessions) Session(s uint64) workload.Session {
	return &traceSession{src: t.traceSource, calls: t.trace.Sessions()[s].Calls}
}

// traceSession is one replayed session's stream of calls.
type traceSession struct {
	src   traceSource
	calls []int
	next  int
}

// Reply is never called: a recorded call's prompt is its recorded blocks
// (no spec asks for the reply), not a history of the server's replies.
func (t *traceSession) Reply(string, int) {}

func (t *traceSession) Next(i uint64) workload.Spec {
	k := t.next
	t.next++
	spec := t.src.Spec(uint64(t.calls[k]))
	spec.Index, spec.Turn, spec.Turns = i, k, len(t.calls)
	return spec
}
