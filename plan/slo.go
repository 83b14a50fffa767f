package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/inferload/inferload/record"
)

// Compute declares the served model's size for the FLOPs estimate
// (docs/metrics.md#compute). ParamsB 0 means no estimate.
type Compute struct {
	// ParamsB is the parameters, in billions, that work on each token
	// (the active ones for a mixture of experts).
	ParamsB float64 `yaml:"params_b"`
	// Layers and Hidden (depth and model width), given together, add the
	// attention term that grows with context length.
	Layers int `yaml:"layers"`
	Hidden int `yaml:"hidden"`
}

// maxSLOMs bounds an SLO bound: a day, far beyond any request timeout.
const maxSLOMs = 86_400_000

// sloFlag collects --goodput-slo: per-request bounds in the threshold language,
// repeatable and comma-separated ("ttft<=500ms,tpot<=50ms").
type sloFlag struct {
	exprs []string
	slo   record.SLO
}

func (sf *sloFlag) String() string { return strings.Join(sf.exprs, ",") }

// Type names the value in --help.
func (sf *sloFlag) Type() string { return "bounds" }

// Set parses one --goodput-slo and adds its bounds to the earlier ones'.
func (sf *sloFlag) Set(s string) error {
	slo, err := record.ParseBounds(append(slices.Clone(sf.exprs), s))
	if err != nil {
		return err
	}
	sf.exprs, sf.slo = append(sf.exprs, s), slo
	return nil
}

func (f *Flags) bindSLOAndCompute() {
	fs := f.fs
	slo := &sloFlag{}
	fs.Var(slo, "goodput-slo", "SLO each request is judged by for goodput (whole run and each sweep step), e.g. 'ttft<=500ms,tpot<=50ms' (repeatable; over the plan's workload.slo bound by bound; --slo-ttft-ms and the like are older spellings of one bound)")
	f.add("goodput-slo", "workload.slo", func(p *Plan) { p.Workload.SLO = slo.slo.Over(p.Workload.SLO) })
	bind(f, "slo-ttft-ms", "workload.slo.ttft_ms", fs.Float64("slo-ttft-ms", 0, "SLO: a request meets it only with TTFT at most this many ms; goodput (whole run and each sweep step) counts those (0: no bound)"), func(p *Plan) *float64 { return &p.Workload.SLO.TTFTMs })
	bind(f, "slo-tpot-ms", "workload.slo.tpot_ms", fs.Float64("slo-tpot-ms", 0, "SLO: a request meets it only with TPOT at most this many ms, as --slo-ttft-ms (0: no bound)"), func(p *Plan) *float64 { return &p.Workload.SLO.TPOTMs })
	bind(f, "slo-ttfo-ms", "workload.slo.ttfo_ms", fs.Float64("slo-ttfo-ms", 0, "SLO: a request meets it only with its first answer token (after any reasoning) within this many ms, as --slo-ttft-ms (0: no bound)"), func(p *Plan) *float64 { return &p.Workload.SLO.TTFOMs })
	bind(f, "slo-e2e-ms", "workload.slo.e2e_ms", fs.Float64("slo-e2e-ms", 0, "SLO: a request meets it only with E2E latency at most this many ms, as --slo-ttft-ms (0: no bound)"), func(p *Plan) *float64 { return &p.Workload.SLO.E2EMs })
	bind(f, "model-params-b", "compute.params_b", fs.Float64("model-params-b", 0, "the model's parameters in billions, for the FLOPs estimate (0: no estimate)"), func(p *Plan) *float64 { return &p.Compute.ParamsB })
	bind(f, "model-layers", "compute.layers", fs.Int("model-layers", 0, "the model's layers, with --model-hidden, for the attention FLOPs"), func(p *Plan) *int { return &p.Compute.Layers })
	bind(f, "model-hidden", "compute.hidden", fs.Int("model-hidden", 0, "the model's hidden size, with --model-layers, for the attention FLOPs"), func(p *Plan) *int { return &p.Compute.Hidden })
}

// slos checks workload.slo and every class's.
func (v *validator) slos() {
	v.slo("workload.slo", v.p.Workload.SLO)
	for k, c := range v.p.Workload.Classes {
		v.slo(fmt.Sprintf("workload.classes[%d].slo", k), c.SLO)
	}
}

func (v *validator) slo(path string, s record.SLO) {
	for name, ms := range map[string]float64{"ttft_ms": s.TTFTMs, "ttfo_ms": s.TTFOMs, "tpot_ms": s.TPOTMs, "e2e_ms": s.E2EMs} {
		if ms < 0 || ms > maxSLOMs || math.IsNaN(ms) {
			v.fail(path+"."+name, "%v: want a bound in milliseconds from 0 (none) to %d", ms, maxSLOMs)
		}
	}
}

// compute checks the model declaration when one is given.
func (v *validator) compute() {
	c := v.p.Compute
	if c == (Compute{}) {
		return
	}
	if err := c.model().Validate(); err != nil {
		v.fail("compute", "%v", err)
	}
}

func (c Compute) model() record.Model {
	return record.Model{ParamsB: c.ParamsB, Layers: c.Layers, Hidden: c.Hidden}
}

// Model returns the declared model for the FLOPs estimate, nil when the
// plan declares none.
func (c Compute) Model() *record.Model {
	if c.ParamsB == 0 {
		return nil
	}
	m := c.model()
	return &m
}

// SLOs returns the objectives goodput is judged by: workload.slo as the
// default, and each class's bounds over it.
func (w *Workload) SLOs() *record.SLOs {
	s := &record.SLOs{Default: w.SLO, Classes: map[string]record.SLO{}}
	for _, c := range w.Classes {
		s.Classes[c.Name] = c.SLO
	}
	return s
}

// Objectives are the workload's goodput SLOs as capacity objectives of
// the given share: one per class whose SLO (its own bounds over
// workload.slo) bounds anything, judged on that class's requests only,
// or with no classes workload.slo over every request. A sweep judges
// each step by them, so a class that misses is not averaged away by the
// others. None when the plan declares no SLO.
func (w *Workload) Objectives(share float64) []record.SLO {
	var out []record.SLO
	if len(w.Classes) == 0 {
		if w.SLO != (record.SLO{}) {
			o := w.SLO
			o.Share = share
			out = append(out, o)
		}
		return out
	}
	for _, c := range w.Classes {
		o := c.SLO.Over(w.SLO)
		if o == (record.SLO{}) {
			continue
		}
		o.Share, o.Class = share, c.Name
		out = append(out, o)
	}
	return out
}
