package workload

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// blockSize is the hash block the tests build prompts of: small, so the
// split tokenizer stays quick, and not a multiple of the salt.
const blockSize = 48

// blockConfigs are the languages and tokenizers block prompts must be
// exact for, each with the tokenizer that measures them.
func blockConfigs(t *testing.T) []struct {
	name   string
	cfg    GeneratorConfig
	counts Tokenizer
} {
	tiny, err := LoadTokenizer(filepath.Join("testdata", "tokenizer", "tiny.json"))
	if err != nil {
		t.Fatal(err)
	}
	cl100k := mustTokenizer(t, Cl100kBase)
	return []struct {
		name   string
		cfg    GeneratorConfig
		counts Tokenizer
	}{
		// The word list, one token a word in cl100k.
		{"en/words", GeneratorConfig{}, cl100k},
		// A tokenizer that splits the words: blocks fitted to it.
		{"en/hf-tiny", GeneratorConfig{Tokenizer: tiny}, tiny},
		// Chinese prose fitted to cl100k.
		{"zh/cl100k", GeneratorConfig{Language: LanguageChinese}, cl100k},
	}
}

func blockGenerator(t *testing.T, cfg GeneratorConfig, salt string) *Generator {
	t.Helper()
	cfg.Seed, cfg.Input, cfg.Output, cfg.Salt, cfg.BlockTokens = 3, Fixed(8), Fixed(4), salt, blockSize
	return mustGenerator(t, cfg)
}

// Two requests naming the same leading blocks share exactly the salt and
// those blocks, token for token, then differ; each prompt has exactly its
// input length.
func TestSpecOfBlocksSharesExactPrefixes(t *testing.T) {
	t.Parallel()
	for _, tc := range blockConfigs(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := blockGenerator(t, tc.cfg, "a1b2c3")
			saltTokens := tc.counts.Count(g.salt.text())
			in := saltTokens + 3*blockSize
			a := g.SpecOfBlocks(0, in, 4, []int64{7, 8, 9})
			b := g.SpecOfBlocks(1, in, 4, []int64{7, 8, 10})
			ta, tb := tc.counts.Encode(a.Prompt), tc.counts.Encode(b.Prompt)
			if len(ta) != in || len(tb) != in {
				t.Fatalf("prompts of %d and %d tokens, want %d", len(ta), len(tb), in)
			}
			shared := saltTokens + 2*blockSize
			if !slices.Equal(ta[:shared], tb[:shared]) {
				t.Errorf("the salt and blocks 7, 8 differ between the prompts")
			}
			if slices.Equal(ta[shared:], tb[shared:]) {
				t.Errorf("blocks 9 and 10 are the same text")
			}
		})
	}
}

// The last block is cut to reach the input length exactly, and the cut is
// a prefix of the block sent whole; blocks that do not fill the input are
// followed by the request's own text; an input shorter than the salt
// holds no block.
func TestSpecOfBlocksLengths(t *testing.T) {
	t.Parallel()
	for _, tc := range blockConfigs(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := blockGenerator(t, tc.cfg, "a1b2c3")
			s := tc.counts.Count(g.salt.text())
			tests := []struct {
				in  int
				ids []int64
			}{
				// Two whole blocks, the second cut by 10 tokens.
				{s + 2*blockSize - 10, []int64{1, 2}},
				// One block, then 30 tokens of the request's own.
				{s + blockSize + 30, []int64{1}},
				// No blocks at all: the request's own text.
				{s + 5, nil},
				// A prompt shorter than the salt holds the salt's words that
				// fit and the block fills the rest.
				{2, []int64{1}},
			}
			whole := g.SpecOfBlocks(9, s+2*blockSize, 4, []int64{1, 2}).Prompt
			for _, tt := range tests {
				sp := g.SpecOfBlocks(1, tt.in, 4, tt.ids)
				if n := tc.counts.Count(sp.Prompt); n != tt.in || sp.InputTokens != tt.in {
					t.Errorf("in %d ids %v: prompt of %d tokens, spec says %d", tt.in, tt.ids, n, sp.InputTokens)
				}
				if len(tt.ids) == 2 && !strings.HasPrefix(whole, sp.Prompt) {
					t.Errorf("in %d: the cut block is not a prefix of the whole one", tt.in)
				}
			}
		})
	}
}

// A run's salt opens every prompt, so another run (another salt) shares no
// block text with it, and the same salt rebuilds the same prompt.
func TestSpecOfBlocksSaltSeparatesRuns(t *testing.T) {
	t.Parallel()
	bp := []int64{4, 5}
	one, other := blockGenerator(t, GeneratorConfig{}, "a1b2c3"), blockGenerator(t, GeneratorConfig{}, "d4e5f6")
	a, b := one.SpecOfBlocks(0, 100, 4, bp).Prompt, other.SpecOfBlocks(0, 100, 4, bp).Prompt
	if strings.Contains(b, one.blocks.text(4)) || a == b {
		t.Errorf("two salts share block 4's text")
	}
	if again := blockGenerator(t, GeneratorConfig{}, "a1b2c3").SpecOfBlocks(0, 100, 4, bp).Prompt; again != a {
		t.Errorf("one salt built two prompts")
	}
}

// The cache keeps at most its bound however many blocks a trace names,
// and a block rebuilt after eviction is the text it had.
func TestBlockCacheIsBounded(t *testing.T) {
	t.Parallel()
	g := blockGenerator(t, GeneratorConfig{}, "a1b2c3")
	first := g.blocks.text(0)
	limit := g.blocks.cache.max
	for id := range int64(limit + 100) {
		g.blocks.text(id)
	}
	if n := g.blocks.cache.len(); n != limit {
		t.Errorf("%d blocks kept, want the bound %d", n, limit)
	}
	if _, kept := g.blocks.cache.get(0); kept {
		t.Errorf("block 0, the least recently used, is still kept")
	}
	if again := g.blocks.text(0); again != first {
		t.Errorf("block 0 rebuilt as other text")
	}
}

// At Mooncake's 512-token blocks, which cross paragraph breaks, prompts of
// several blocks, the last cut anywhere, still count exactly in cl100k:
// no token joins across a block's edge.
func TestSpecOfBlocksExactAtMooncakeSize(t *testing.T) {
	t.Parallel()
	cl100k := mustTokenizer(t, Cl100kBase)
	g := mustGenerator(t, GeneratorConfig{Seed: 1, Input: Fixed(8), Output: Fixed(4), Salt: "a1b2c3", BlockTokens: 512})
	for i := range 50 {
		in := SaltWords + 3*512 + 10*i // the fourth block cut to 10i tokens
		sp := g.SpecOfBlocks(uint64(i), in, 4, []int64{int64(i), int64(i + 1), int64(i + 2), int64(7 * i)})
		if n := cl100k.Count(sp.Prompt); n != in {
			t.Errorf("request %d: %d tokens, want %d", i, n, in)
		}
	}
}

// Specs are safe to build from many goroutines at once: the block cache is
// shared, and each prompt is what a lone caller gets.
func TestSpecOfBlocksConcurrent(t *testing.T) {
	t.Parallel()
	g := blockGenerator(t, GeneratorConfig{}, "a1b2c3")
	want := make([]string, 64)
	for i := range want {
		want[i] = blockGenerator(t, GeneratorConfig{}, "a1b2c3").SpecOfBlocks(uint64(i), 3*blockSize, 4, []int64{int64(i % 5), int64(i % 7), int64(i)}).Prompt
	}
	got := make([]string, len(want))
	var wg sync.WaitGroup
	for i := range want {
		wg.Go(func() {
			got[i] = g.SpecOfBlocks(uint64(i), 3*blockSize, 4, []int64{int64(i % 5), int64(i % 7), int64(i)}).Prompt
		})
	}
	wg.Wait()
	if !slices.Equal(got, want) {
		t.Errorf("concurrent specs differ from lone ones")
	}
}

// BlockReuse counts, in send order, the leading block tokens earlier
// prompts held: whole blocks, a block an earlier prompt held only the
// start of up to that start (and nothing after it), nothing after a new
// block; in a loop's later passes every block was sent.
func TestBlockReuse(t *testing.T) {
	t.Parallel()
	g := blockGenerator(t, GeneratorConfig{}, "a1b2c3")
	s := SaltWords // one token a word: the salt's tokens in any prompt this long
	reqs := []BlockRequest{
		{s + 3*blockSize, []int64{1, 2, 3}},       // all new
		{s + 2*blockSize + 5, []int64{1, 2, 4}},   // 1, 2 whole; 4 new
		{s + 3*blockSize, []int64{1, 2, 4}},       // 1, 2 whole; 4 held 5 tokens before
		{s + 3*blockSize, []int64{9, 2, 3}},       // 9 is new: 2, 3 after it are no prefix
		{s + blockSize + 20, []int64{1, 5}},       // 1 whole, 5 new
		{s + 2*blockSize, []int64{1, 5}},          // 1 whole; 5 held only 20 tokens
		{s + blockSize/2, []int64{3}},             // the start of 3
		{s + 3*blockSize, []int64{1, 2, 3, 6, 7}}, // 3 blocks fill it: 6, 7 hold nothing
	}
	first, later := g.BlockReuse(reqs)
	wantFirst := []int{0, 2 * blockSize, 2*blockSize + 5, 0, blockSize, blockSize + 20, blockSize / 2, 3 * blockSize}
	// Later passes: the whole first pass came before, so each prompt's
	// every block is known up to the most any prompt held of it.
	wantLater := []int{3 * blockSize, 2*blockSize + 5, 3 * blockSize, 3 * blockSize, blockSize + 20, 2 * blockSize, blockSize / 2, 3 * blockSize}
	if !slices.Equal(first, wantFirst) || !slices.Equal(later, wantLater) {
		t.Errorf("reuse\n first %v\n  want %v\n later %v\n  want %v", first, wantFirst, later, wantLater)
	}
	// The same requests in another order: reuse follows the send order.
	if f, _ := g.BlockReuse([]BlockRequest{reqs[1], reqs[0]}); !slices.Equal(f, []int{0, 2 * blockSize}) {
		t.Errorf("reversed: %v, want [0 %d]", f, 2*blockSize)
	}
}
