package workload

import (
	"errors"
	"math/rand/v2"
)

// datasetPickStream separates a dataset class's draws from the synthetic
// generator's at the same index.
const datasetPickStream = 0xda7a_91c7

// datasetSource draws a class's requests from a dataset: request i gets an
// entry picked from (seed, i), so the same plan and seed send the same
// prompts whatever the timing.
type datasetSource struct {
	seed      uint64
	d         *Dataset
	output    Dist
	ignoreEOS bool
	class     string
}

func newDatasetSource(seed uint64, c ClassConfig) (*datasetSource, error) {
	if c.Dataset.Len() == 0 {
		return nil, errors.New("the dataset has no entries left after filtering")
	}
	if c.Output == nil {
		return nil, errors.New("output length distribution is missing (it decides entries without one)")
	}
	return &datasetSource{seed: seed, d: c.Dataset, output: c.Output, ignoreEOS: c.IgnoreEOS, class: c.Name}, nil
}

// Spec returns request i: a dataset entry, with its own output length when
// the dataset records one.
func (s *datasetSource) Spec(i uint64) Spec {
	rng := rand.New(rand.NewPCG(s.seed^datasetPickStream, splitmix64(i)))
	e := s.d.Entry(rng.IntN(s.d.Len()))
	out := e.OutputTokens
	if out <= 0 {
		out = s.output.Sample(rng)
	}
	return Spec{Index: i, Class: s.class, Prompt: e.Prompt, Messages: e.Messages,
		InputTokens: e.InputTokens, MaxTokens: out, IgnoreEOS: s.ignoreEOS}
}
