package experiment

import (
	"cmp"
	"fmt"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/workload"
)

// traceReplay is the trace shape: cfg replays the plan's trace, an open
// loop whose arrivals are its timestamps and whose requests have its
// lengths (and, in a Mooncake trace, its prompt blocks). A trace that
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
	if p.Load.PlaysOnce() && cfg.Duration == 0 && (cfg.Requests == 0 || cfg.Requests > tr.Len()) {
		cfg.Requests = tr.Len()
	}
	return nil
}

// traceGenerator builds the synthetic prompts of the default class, whose
// lengths the trace overrides; a Mooncake trace's prompts are made of its
// hash blocks.
func traceGenerator(p *plan.Plan, files *workloadFiles, tr *schedule.Trace) (*workload.Generator, error) {
	mix, err := p.Workload.MixConfig()
	if err != nil {
		return nil, err
	}
	if err := files.attach(p, &mix); err != nil {
		return nil, err
	}
	cfg := mix.Classes[0].GeneratorConfig(mix.Seed, mix.Salt)
	if tr.Format() == schedule.TraceMooncake {
		cfg.BlockTokens = cmp.Or(p.Load.Trace.BlockTokens, schedule.DefaultBlockTokens)
	}
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
	if tr.Format() != schedule.TraceMooncake {
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
