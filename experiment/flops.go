package experiment

import (
	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/record"
)

// flopsSample is how many of the plan's requests the mean FLOPs per request
// is taken over: the specs are a pure function of the seed and index, so
// the mean, and the rate, are the same every run.
const flopsSample = 1000

// flopsRate turns a target FLOP/s into an arrival rate: the target ÷ the
// mean FLOPs of the workload's requests (prefill of the prompt plus decode
// of max_tokens, as the summary's offered FLOP/s counts them).
//
// Pacing each arrival by its own request's FLOPs would tie the schedule to
// the content; a constant mean rate keeps the arrival process (Poisson,
// gamma) what the plan says, and over a run it offers the target on average.
func flopsRate(target float64, m *record.Model, src engine.Source) float64 {
	var sum float64
	for i := range uint64(flopsSample) {
		s := src.Spec(i)
		sum += m.PrefillFLOPs(s.InputTokens) + m.DecodeFLOPs(s.InputTokens, s.MaxTokens)
	}
	mean := sum / flopsSample
	if mean <= 0 {
		return 0
	}
	return target / mean
}
