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

// blockLen is how many tokens of its block j a prompt of in tokens holds:
// after the salt, whole blocks, the last cut short, 0 past the end. The
// one layout SpecOfBlocks builds and BlockReuse counts.
func (g *Generator) blockLen(in, j int) int {
	_, salt := g.salt.fit(in)
	return min(max(in-salt-j*g.blocks.size, 0), g.blocks.size)
}

// SpecOfBlocks is request i with a prompt of in tokens built from the
// hash blocks ids (GeneratorConfig.BlockTokens each; the last cut to
// fit), after the run's salt and before text of the request's own when
// the blocks do not fill in. An output length below 1 is drawn from the
// output distribution. Without BlockTokens it is SpecOfLength.
func (g *Generator) SpecOfBlocks(i uint64, in, out int, ids []int64) Spec {
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
	for j, id := range ids {
		n := g.blockLen(in, j)
		if n == 0 {
			break
		}
		b.WriteString(g.blocks.head(id, n))
		left -= n
	}
	s.Prompt = g.text(rng, i, left, b.String())
	return s
}

// BlockRequest is a traced request's prompt length and blocks.
type BlockRequest struct {
	InputTokens int
	IDs         []int64 // shared read-only
}

// BlockReuse returns how much of each request's prompt, sent in the order
// given, an earlier request already sent: the tokens of its leading
// blocks, each counted up to the most of it any earlier prompt held (an
// earlier request may have held only the start of a block, as its cut
// last one). Only a leading run counts, because a server's prefix cache
// serves a prompt's prefix and nothing after the first token it lacks;
// Mooncake's ids chain, so in its own traces a known id only follows
// known ones. first is the requests' reuse in one pass; later in every
// later pass of a looping replay, when all passes before sent every
// block. Both are 0 without BlockTokens.
func (g *Generator) BlockReuse(reqs []BlockRequest) (first, later []int) {
	first, later = make([]int, len(reqs)), make([]int, len(reqs))
	if g.blocks == nil {
		return first, later
	}
	sent := make(map[int64]int) // block id → most tokens of it sent so far
	for k, r := range reqs {
		first[k] = g.leadingSent(r, sent)
		g.markSent(r, sent)
	}
	for k, r := range reqs { // the first pass sent every block
		later[k] = g.leadingSent(r, sent)
	}
	return first, later
}

// leadingSent is how many of r's leading block tokens sent holds.
func (g *Generator) leadingSent(r BlockRequest, sent map[int64]int) int {
	reuse := 0
	for j, id := range r.IDs {
		n := g.blockLen(max(r.InputTokens, 1), j)
		got := min(sent[id], n)
		reuse += got
		if n == 0 || got < n {
			break
		}
	}
	return reuse
}

// markSent records the tokens of each block r's prompt holds.
func (g *Generator) markSent(r BlockRequest, sent map[int64]int) {
	for j, id := range r.IDs {
		sent[id] = max(sent[id], g.blockLen(max(r.InputTokens, 1), j))
	}
}
