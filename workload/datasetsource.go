package workload

import (
	"errors"
	"math/rand/v2"
	"slices"
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
	// saltLine opens the first message (and the prompt) of every request;
	// saltTokens is its length, added to each entry's. Empty: no salt.
	saltLine   string
	saltTokens int
}

func newDatasetSource(seed uint64, salt string, c ClassConfig) (*datasetSource, error) {
	if c.Dataset.Len() == 0 {
		return nil, errors.New("the dataset has no entries left after filtering")
	}
	if c.Output == nil {
		return nil, errors.New("output length distribution is missing (it decides entries without one)")
	}
	src := &datasetSource{seed: seed, d: c.Dataset, output: c.Output, ignoreEOS: c.IgnoreEOS, class: c.Name}
	src.saltLine, src.saltTokens = newSalt(salt, c.Tokenizer).line(c.Tokenizer)
	return src, nil
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
	// A graded entry is never sent with ignore_eos: an answer padded to
	// max_tokens is not the model's answer.
	return s.salted(Spec{Index: i, Class: s.class, Prompt: e.Prompt, Messages: e.Messages,
		InputTokens: e.InputTokens, MaxTokens: out, IgnoreEOS: s.ignoreEOS && e.Answer == nil, Answer: e.Answer})
}

// salted opens sp's first message and its prompt with the run's salt. A
// replayed dataset is salted like synthetic text: its real prompts, sent
// again by a later run, would otherwise find the server's prefix cache
// warm from the earlier one. The dataset's messages are shared between
// requests, so the first is changed in a copy.
func (s *datasetSource) salted(sp Spec) Spec {
	if s.saltLine == "" {
		return sp
	}
	sp.Prompt = s.saltLine + sp.Prompt
	if len(sp.Messages) > 0 {
		sp.Messages = slices.Clone(sp.Messages)
		sp.Messages[0].Content = s.saltLine + sp.Messages[0].Content
	}
	sp.InputTokens += s.saltTokens
	return sp
}
