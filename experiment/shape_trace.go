package experiment

import (
	"fmt"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/workload"
)

// traceReplay is the trace shape: cfg replays the plan's trace, an open
// loop whose arrivals are its timestamps and whose requests have its
// lengths. A trace that plays once caps the phase at its length unless a
// duration is set (the phase then lasts it).
func traceReplay(p *plan.Plan, cfg *engine.Config, files *workloadFiles) error {
	t := p.Load.Trace
	tr, err := schedule.LoadTrace(t.Path, schedule.TraceOptions{Format: t.Format, Speed: t.Speed, Loop: t.Loop,
		Context: files.context()})
	if err != nil {
		return fmt.Errorf("load.trace: %w", err)
	}
	gen, err := traceGenerator(p, files)
	if err != nil {
		return err
	}
	cfg.Shape = openLoop(p, tr)
	cfg.Source = traceSource{gen: gen, trace: tr}
	if p.Load.PlaysOnce() && cfg.Duration == 0 && (cfg.Requests == 0 || cfg.Requests > tr.Len()) {
		cfg.Requests = tr.Len()
	}
	return nil
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
	return workload.NewGenerator(mix.Classes[0].GeneratorConfig(mix.Seed, mix.Salt))
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
