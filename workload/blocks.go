package workload

import (
	"hash/fnv"
	"math/rand/v2"
	"strings"
)

// blockStream separates the random streams of hash blocks from those of
// requests and shared prefixes.
const blockStream = 0xb10c_5eed_0d15_ea5e

// blockCacheTokens bounds the text a generator keeps of hash blocks: about
// 2 million tokens (some 12 MB of English), whatever the block size. A
// Mooncake trace names up to ~100k distinct blocks; those not kept are
// rebuilt, identically, when a later request names them again.
const blockCacheTokens = 1 << 21

// blockTexts renders the prompt blocks a trace names by hash id (Mooncake's
// hash_ids): block id's text is a pure function of (seed, salt, id) of
// exactly size tokens, so two prompts naming the same ids in the same
// order share exactly that prefix, and a run with another salt shares
// none of it.
type blockTexts struct {
	size int
	seed uint64
	// render writes n tokens of the generator's prose from rng; tok
	// (never nil) cuts a block short at a token boundary.
	render func(rng *rand.Rand, n int) string
	tok    Tokenizer
	cache  *blockCache
}

// newBlockTexts returns the blocks of cfg (cfg.BlockTokens > 0) in its
// language and for its tokenizer.
func newBlockTexts(cfg GeneratorConfig) *blockTexts {
	h := fnv.New64a()
	h.Write([]byte(cfg.Salt))
	b := &blockTexts{size: cfg.BlockTokens, seed: cfg.Seed ^ h.Sum64() ^ blockStream, tok: cfg.Tokenizer,
		cache: newBlockCache(max(blockCacheTokens/cfg.BlockTokens, 1))}
	switch {
	case cfg.Language == LanguageChinese:
		b.render = func(rng *rand.Rand, n int) string { return TextZh(cfg.Tokenizer, rng, n) }
	case cfg.Tokenizer != nil && !wordsExactFor(cfg.Tokenizer):
		b.render = func(rng *rand.Rand, n int) string { return TextOfTokens(cfg.Tokenizer, rng, n) }
	default:
		b.render = Text
	}
	if b.tok == nil {
		b.tok = defaultTokenizer()
	}
	return b
}

// text returns block id's whole text, from the cache or rendered (and
// kept). Two goroutines missing the same block both render it, to the
// same text: cheaper than holding the lock while rendering.
func (b *blockTexts) text(id int64) string {
	if s, ok := b.cache.get(id); ok {
		return s
	}
	s := b.render(rand.New(rand.NewPCG(b.seed, splitmix64(uint64(id)))), b.size)
	b.cache.put(id, s)
	return s
}

// head returns the first n tokens of block id: the whole block when n is
// its size, else the block cut at a token boundary, so a prompt's last,
// partial block is a prefix of the same block sent whole.
func (b *blockTexts) head(id int64, n int) string {
	s := b.text(id)
	if n >= b.size {
		return s
	}
	return fitTokens(b.tok, b.tok.Encode(s), n)
}

// BlockPrompt names the blocks a traced request's prompt is made of.
type BlockPrompt struct {
	// IDs are the prompt's blocks, first block first (Mooncake's
	// hash_ids); the prompt goes on with text of its own after them.
	IDs []int64
	// Reused is how many of IDs, from the first, an earlier request sent:
	// their tokens are the spec's ReuseTokens.
	Reused int
}

// SpecOfBlocks is request i with a prompt of in tokens built from the
// hash blocks of bp (GeneratorConfig.BlockTokens each; the last cut to
// fit), after the run's salt and before text of the request's own when
// the blocks do not fill in. An output length below 1 is drawn from the
// output distribution. Without BlockTokens it is SpecOfLength.
func (g *Generator) SpecOfBlocks(i uint64, in, out int, bp BlockPrompt) Spec {
	if g.blocks == nil {
		return g.SpecOfLength(i, in, out)
	}
	rng := rand.New(rand.NewPCG(g.cfg.Seed, splitmix64(i)))
	if out < 1 {
		out = g.cfg.Output.Sample(rng)
	}
	in = max(in, 1)
	s := Spec{Index: i, Class: g.cfg.Class, InputTokens: in, MaxTokens: out, IgnoreEOS: g.cfg.IgnoreEOS}
	salt, left := g.salt.fit(in)
	left = in - left
	var b strings.Builder
	b.Grow(len(salt) + in*bytesPerToken)
	b.WriteString(salt)
	for j, id := range bp.IDs {
		n := min(left, g.blocks.size)
		if n == 0 {
			break
		}
		b.WriteString(g.blocks.head(id, n))
		if j < bp.Reused {
			s.ReuseTokens += n
		}
		left -= n
	}
	s.Prompt = g.text(rng, i, left, b.String())
	return s
}
