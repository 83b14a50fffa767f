package analyze

import (
	"math"
	"testing"

	"github.com/inferload/inferload/record"
)

// TestStepRepeats: steps are matched by index and load across runs; each
// figure's mean and Student-t interval come from the runs' values (10,
// 12, 14: mean 12, half-width t(0.975, 2) × 2 / √3 = 4.968); a figure a
// step lacks in some run (no TTFT) is left out; a probe only one run made
// is not reported; each run's verdicts are kept in run order, nil where
// none was found, and a verdict the experiment does not draw stays empty.
func TestStepRepeats(t *testing.T) {
	t.Parallel()
	step := func(index int, load, tok float64, ttft bool) record.Step {
		st := record.Step{Index: index, Mode: record.ModeClosed, Target: load, Throughput: record.Throughput{OutputTokensPerS: tok}}
		st.Metrics.E2E = record.Stats{Count: 100, P99: 1000}
		if ttft {
			st.Metrics.TTFT = record.Stats{Count: 100, P50: tok / 10}
		}
		return st
	}
	runs := []*record.Summary{
		{Steps: []record.Step{step(1, 8, 100, true), step(2, 16, 10, true), step(3, 64, 5, true)},
			Operating: &record.OperatingPoint{Found: true, Load: 24}, Knee: &record.Knee{Found: true, Load: 64}},
		{Steps: []record.Step{step(1, 8, 120, true), step(2, 16, 12, false)},
			Operating: &record.OperatingPoint{Found: true, Load: 24}, Knee: &record.Knee{}},
		{Steps: []record.Step{step(1, 8, 140, true), step(2, 16, 14, true)},
			Operating: &record.OperatingPoint{}, Knee: &record.Knee{Found: true, Load: 64}},
	}
	got := StepRepeats(runs, 0.95)
	if len(got.Steps) != 2 || got.Steps[0].Load != 8 || got.Steps[1].Load != 16 {
		t.Fatalf("steps %+v: want 8 and 16 users (64 only in one run)", got.Steps)
	}
	fig := func(s StepRepeat, metric string) *RepeatFigure {
		for i := range s.Figures {
			if s.Figures[i].Metric == metric {
				return &s.Figures[i]
			}
		}
		return nil
	}
	tok := fig(got.Steps[0], "output_tokens_per_s")
	if tok == nil || tok.Mean != 120 || math.Abs(tok.High-tok.Mean-49.68) > 0.01 || math.Abs(tok.CV-20.0/120) > 1e-9 {
		t.Errorf("8 users, tokens/s %+v: want mean 120, half-width 49.68, CV 0.1667", tok)
	}
	if fig(got.Steps[1], "ttft_ms.p50") != nil || fig(got.Steps[0], "ttft_ms.p50") == nil {
		t.Errorf("TTFT at 16 users is missing from one run: it must be left out there, kept at 8")
	}
	want := func(vs []*float64, loads ...float64) bool {
		if len(vs) != len(loads) {
			return false
		}
		for i, v := range vs {
			if (v == nil) != (loads[i] == 0) || (v != nil && *v != loads[i]) {
				return false
			}
		}
		return true
	}
	v := got.Verdicts
	if !want(v.Operating, 24, 24, 0) || !want(v.Knee, 64, 0, 64) || len(v.Capacity) != 0 {
		t.Errorf("verdicts %+v: want run at 24, 24, none; knee 64, none, 64; no capacity", v)
	}
	if r := StepRepeats(runs[:1], 0.95); len(r.Steps) != 0 {
		t.Errorf("one run: %+v, want nothing", r)
	}
}
