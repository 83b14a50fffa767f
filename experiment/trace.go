package experiment

import (
	"fmt"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/workload"
)

// withTrace makes cfg replay the plan's trace: its timestamps are the
// arrivals, its lengths the requests'. A trace that plays once caps the
// phase at its length unless a duration is set (the phase then lasts it).
func withTrace(p *plan.Plan, cfg engine.Config, files *workloadFiles) (engine.Config, error) {
	t := p.Load.Trace
	tr, err := schedule.LoadTrace(t.Path, schedule.TraceOptions{Format: t.Format, Speed: t.Speed, Loop: t.Loop,
		Context: files.context()})
	if err != nil {
		return engine.Config{}, fmt.Errorf("load.trace: %w", err)
	}
	gen, err := traceGenerator(p, files)
	if err != nil {
		return engine.Config{}, err
	}
	cfg.Arrivals = tr
	cfg.Source = traceSource{gen: gen, trace: tr}
	if !t.Loop && cfg.Duration == 0 && (cfg.Requests == 0 || cfg.Requests > tr.Len()) {
		cfg.Requests = tr.Len()
	}
	return cfg, nil
}

// traceGenerator builds the synthetic prompts of the default class, whose
// lengths the trace overrides.
func traceGenerator(p *plan.Plan, files *workloadFiles) (*workload.Generator, error) {
	mix, err := p.Workload.MixConfig()
	if err != nil {
		return nil, err
	}
	if err := files.attach(p, &mix); err != nil {
		return nil, err
	}
	c := mix.Classes[0]
	return workload.NewGenerator(workload.GeneratorConfig{Seed: mix.Seed, Input: c.Input, Output: c.Output,
		IgnoreEOS: c.IgnoreEOS, Class: c.Name, Prefix: c.Prefix, Tokenizer: c.Tokenizer, Language: c.Language})
}

// traceSource gives request i the lengths the trace recorded for it.
type traceSource struct {
	gen   *workload.Generator
	trace *schedule.Trace
}

func (s traceSource) Spec(i uint64) workload.Spec {
	e := s.trace.Request(i)
	return s.gen.SpecOfLength(i, e.InputTokens, e.OutputTokens)
}
