package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Limits on shared prefixes: they are built once, in memory, when the
// workload is set up.
const (
	maxPrefixGroups = 10_000
	maxPrefixTokens = 1 << 20 // tokens over all groups
)

// prefixStream separates the random stream of the shared prefixes from
// those of the requests, so prefix g's text never echoes request g's.
const prefixStream = 0x5eed_0f_9e3779b9

// SharedPrefix opens some of a class's prompts with one of a few fixed
// texts, as a system prompt or few-shot examples do in production: with
// Groups 1 every chosen request shares one prefix (the best case for a
// server's prefix cache); with Groups K they spread over K distinct ones
// (K tenants, K applications), which a small cache cannot all hold.
//
// The prefix comes on top of the drawn input length: a request with a
// 1000-token prefix and input_tokens 200 sends 1200 tokens, and its spec's
// InputTokens says so.
type SharedPrefix struct {
	// Tokens is each prefix's length; 0 means no shared prefix.
	Tokens int
	// Fraction of the class's requests that carry a prefix, in (0, 1];
	// 0 means 1 (all of them).
	Fraction float64
	// Groups is how many distinct prefixes there are; 0 means 1. Each
	// request carrying a prefix gets one of them uniformly at random.
	Groups int
}

// Validate checks the prefix's numbers.
func (sp SharedPrefix) Validate() error {
	switch {
	case sp.Tokens < 0 || sp.Tokens > maxPrefixTokens:
		return fmt.Errorf("shared prefix of %d tokens: want 0 to %d", sp.Tokens, maxPrefixTokens)
	case math.IsNaN(sp.Fraction) || sp.Fraction < 0 || sp.Fraction > 1:
		return fmt.Errorf("shared prefix fraction %v: want a share in (0, 1]", sp.Fraction)
	case sp.Groups < 0 || sp.Groups > maxPrefixGroups:
		return fmt.Errorf("shared prefix groups %d: want 1 to %d", sp.Groups, maxPrefixGroups)
	case sp.Tokens*max(sp.Groups, 1) > maxPrefixTokens:
		return fmt.Errorf("shared prefixes of %d tokens × %d groups: want at most %d tokens in all", sp.Tokens, sp.Groups, maxPrefixTokens)
	}
	return nil
}

// build renders the prefixes from seed in the generator's language (text
// of its own tokens: exact for the OpenAI encodings in English, fitted to
// the tokenizer in Chinese), or returns nil when there are none.
func (sp SharedPrefix) build(seed uint64, text func(rng *rand.Rand, n int) string) ([]string, error) {
	if err := sp.Validate(); err != nil {
		return nil, err
	}
	if sp.Tokens == 0 {
		return nil, nil
	}
	out := make([]string, max(sp.Groups, 1))
	for g := range out {
		out[g] = text(rand.New(rand.NewPCG(seed^prefixStream, splitmix64(uint64(g)))), sp.Tokens)
	}
	return out, nil
}

// pickPrefix draws whether this request carries a prefix and which one
// (its group; -1 for none). It draws nothing when the generator has no
// prefixes, so a plan without one sends the same prompts as before
// prefixes existed.
func (g *Generator) pickPrefix(rng *rand.Rand) int {
	if g.prefixes == nil {
		return -1
	}
	share, pick := rng.Float64(), rng.IntN(len(g.prefixes))
	if f := g.cfg.Prefix.Fraction; f > 0 && share >= f {
		return -1
	}
	return pick
}
