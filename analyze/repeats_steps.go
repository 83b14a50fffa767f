package analyze

import (
	"github.com/inferload/inferload/record"
)

// StepRepeat is one step of a sweep or capacity search repeated: its
// load and each figure over the runs that ran it.
type StepRepeat struct {
	Index   int            `json:"index"`
	Mode    string         `json:"mode"`
	Load    float64        `json:"load"`
	Figures []RepeatFigure `json:"figures"`
}

// VerdictRuns are each run's verdicts of a repeated sweep or search, in
// run order: where to run (operating point), the knee, the capacity; nil
// where a run found none; empty for a verdict the experiment does not
// draw.
type VerdictRuns struct {
	Operating []*float64 `json:"operating"`
	Knee      []*float64 `json:"knee"`
	Capacity  []*float64 `json:"capacity"`
}

// SteppedRepeats is a repeated sweep or search: per step, each figure
// over the runs; and each run's verdicts.
type SteppedRepeats struct {
	Steps    []StepRepeat `json:"steps"`
	Verdicts VerdictRuns  `json:"verdicts"`
}

// stepMetric is one figure of a step, read from its summary.
type stepMetric struct {
	name string
	get  func(*record.Step) (float64, bool)
}

// stepMetrics are the figures StepRepeats reports per step: the latency
// percentiles a step table shows (where the step has values), throughput,
// goodput and failures.
var stepMetrics = []stepMetric{
	{"ttft_ms.p50", func(s *record.Step) (float64, bool) { return s.Metrics.TTFT.P50, s.Metrics.TTFT.Count > 0 }},
	{"ttft_ms.p99", func(s *record.Step) (float64, bool) { return s.Metrics.TTFT.P99, s.Metrics.TTFT.Count > 0 }},
	{"e2e_ms.p99", func(s *record.Step) (float64, bool) { return s.Metrics.E2E.P99, s.Metrics.E2E.Count > 0 }},
	{"output_tokens_per_s", func(s *record.Step) (float64, bool) { return s.Throughput.OutputTokensPerS, true }},
	{"goodput_per_s", func(s *record.Step) (float64, bool) { return s.GoodputPerS, true }},
	{"failure_rate", func(s *record.Step) (float64, bool) { return s.FailureRate, true }},
}

// StepRepeats summarises at least two runs of one sweep or search: steps
// are matched by index and load (a search's later probes may differ from
// run to run: a step is reported where at least two runs ran it at that
// load), each figure with its mean's interval at confidence; and every
// run's verdicts, so the reader sees how often a knee or an operating
// point held.
func StepRepeats(runs []*record.Summary, confidence float64) SteppedRepeats {
	var out SteppedRepeats
	if len(runs) < 2 {
		return out
	}
	type key struct {
		index int
		load  float64
	}
	var order []key
	byKey := map[key][]*record.Step{}
	for _, s := range runs {
		for i := range s.Steps {
			st := &s.Steps[i]
			k := key{st.Index, st.Target}
			if byKey[k] == nil {
				order = append(order, k)
			}
			byKey[k] = append(byKey[k], st)
		}
		out.Verdicts.add(s)
	}
	for _, k := range order {
		steps := byKey[k]
		if len(steps) < 2 {
			continue
		}
		t := repeatT(len(steps), confidence)
		r := StepRepeat{Index: k.index, Mode: steps[0].Mode, Load: k.load, Figures: []RepeatFigure{}}
		for _, m := range stepMetrics {
			var values []float64
			for _, st := range steps {
				if v, ok := m.get(st); ok {
					values = append(values, v)
				}
			}
			if len(values) == len(steps) {
				r.Figures = append(r.Figures, repeatFigure(m.name, values, t))
			}
		}
		out.Steps = append(out.Steps, r)
	}
	return out
}

// add appends one run's verdicts: for each the run has (a sweep has a
// knee, a search a capacity), its load, or nil when none was found.
func (v *VerdictRuns) add(s *record.Summary) {
	found := func(ok bool, load float64) *float64 {
		if !ok {
			return nil
		}
		return &load
	}
	if o := s.Operating; o != nil {
		v.Operating = append(v.Operating, found(o.Found, o.Load))
	}
	if k := s.Knee; k != nil {
		v.Knee = append(v.Knee, found(k.Found, k.Load))
	}
	if c := s.Capacity; c != nil {
		v.Capacity = append(v.Capacity, found(c.Found, c.Load))
	}
}
