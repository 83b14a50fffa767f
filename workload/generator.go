package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Source produces the spec of request i. Implementations are pure functions
// of their configuration and i, and safe for concurrent use, so the engine
// can ask for specs from many goroutines in any order and a run is
// reproducible whatever its timing. Synthetic text is the first Source;
// request classes and datasets are later ones.
type Source interface {
	Spec(i uint64) Spec
}

// DefaultClass is the class of requests when no classes are configured.
const DefaultClass = "default"

// prefixWords is how many random words open every prompt, before the
// request index. Together they make each prompt differ from all others
// within its first few tokens, so a server's prefix cache cannot turn every
// request after the first into a cache hit and flatter its TTFT.
const prefixWords = 3

// GeneratorConfig configures a synthetic-text Generator.
type GeneratorConfig struct {
	// Seed selects the workload: the same seed gives the same specs.
	Seed uint64
	// Input is the prompt length distribution, in tokens (required).
	Input Dist
	// Output is the max_tokens distribution (required).
	Output Dist
	// IgnoreEOS is copied into every spec.
	IgnoreEOS bool
	// Class names the specs' class; empty means DefaultClass.
	Class string
	// Prefix puts a shared system-prompt-like prefix in front of some
	// prompts; the zero value puts none.
	Prefix SharedPrefix
	// Tokenizer, when set and not one of the OpenAI encodings the word list
	// is exact for, builds each prompt body to exactly Input tokens for it
	// (the shared prefix keeps its cl100k length).
	Tokenizer Tokenizer
	// Language of the synthetic prose: LanguageEnglish (also when empty)
	// or LanguageChinese. Chinese prompts are fitted to Tokenizer, or to
	// cl100k_base when Tokenizer is nil.
	Language string
	// Salt, when not empty, opens every prompt with SaltWords words drawn
	// from it, before any shared prefix: the run's salt, so a prefix cache
	// left warm by an earlier run with another salt serves nothing. The
	// words are part of the Input tokens (the rest of the prompt is that
	// much shorter), so the salt never changes a prompt's length.
	Salt string
	// BlockTokens, when above 0, is the length of the hash blocks
	// SpecOfBlocks builds prompts from (a Mooncake trace's block size).
	BlockTokens int
}

// Languages of synthetic prose.
const (
	// LanguageEnglish is English prose, exact for the OpenAI encodings
	// without encoding anything (the default).
	LanguageEnglish = "en"
	// LanguageChinese is Chinese prose fitted to the tokenizer.
	LanguageChinese = "zh"
)

// CheckLanguage returns an error unless lang names a supported language
// (empty means English).
func CheckLanguage(lang string) error {
	switch lang {
	case "", LanguageEnglish, LanguageChinese:
		return nil
	}
	return fmt.Errorf("language %q is not supported; want %s or %s", lang, LanguageEnglish, LanguageChinese)
}

// Generator builds synthetic-text specs. It is immutable after
// NewGenerator and safe for concurrent use.
type Generator struct {
	cfg      GeneratorConfig
	prefixes []string // the shared prefixes, one per group; nil for none
	salt     salt
	blocks   *blockTexts // nil without BlockTokens
}

var _ Source = (*Generator)(nil)

// NewGenerator checks cfg and returns a Generator for it.
func NewGenerator(cfg GeneratorConfig) (*Generator, error) {
	if cfg.Input == nil {
		return nil, errors.New("workload: input length distribution is missing")
	}
	if cfg.Output == nil {
		return nil, errors.New("workload: output length distribution is missing")
	}
	if cfg.Input.Min() < 1 {
		return nil, fmt.Errorf("workload: input length %s can be %d; prompts need at least 1 token", cfg.Input, cfg.Input.Min())
	}
	if cfg.Output.Min() < 1 {
		return nil, fmt.Errorf("workload: output length %s can be %d; ask for at least 1 token", cfg.Output, cfg.Output.Min())
	}
	if cfg.Class == "" {
		cfg.Class = DefaultClass
	}
	if err := CheckLanguage(cfg.Language); err != nil {
		return nil, fmt.Errorf("workload: class %s: %w", cfg.Class, err)
	}
	if cfg.Language == LanguageChinese && cfg.Tokenizer == nil {
		tok, err := LoadTokenizer(Cl100kBase)
		if err != nil {
			return nil, fmt.Errorf("workload: class %s: %w", cfg.Class, err)
		}
		cfg.Tokenizer = tok
	}
	prefixes, err := cfg.Prefix.build(cfg.Seed, prefixText(cfg))
	if err != nil {
		return nil, fmt.Errorf("workload: class %s: %w", cfg.Class, err)
	}
	g := &Generator{cfg: cfg, prefixes: prefixes, salt: newSalt(cfg.Salt, cfg.Tokenizer)}
	if cfg.BlockTokens > 0 {
		g.blocks = newBlockTexts(cfg)
	}
	return g, nil
}

// Spec returns request i's spec. It is a pure function of the generator's
// configuration and i: it seeds its own random source from (Seed, i), so
// the order and concurrency of calls do not matter.
//
// The draws happen in a fixed order — input length, output length, the
// shared prefix (only when one is configured), then the prompt's words —
// and changing that order changes every workload; the golden test guards
// it.
func (g *Generator) Spec(i uint64) Spec {
	rng := rand.New(rand.NewPCG(g.cfg.Seed, splitmix64(i)))
	in := g.cfg.Input.Sample(rng)
	out := g.cfg.Output.Sample(rng)
	return g.spec(rng, i, in, out)
}

// SpecOfLength is request i with the given prompt and output lengths
// instead of draws from the distributions: a replayed trace decides them.
// An output length below 1 is drawn from the output distribution.
func (g *Generator) SpecOfLength(i uint64, in, out int) Spec {
	rng := rand.New(rand.NewPCG(g.cfg.Seed, splitmix64(i)))
	if out < 1 {
		out = g.cfg.Output.Sample(rng)
	}
	return g.spec(rng, i, max(in, 1), out)
}

// spec builds request i's prompt of in tokens (plus any shared prefix):
// the salt, the shared prefix, then the request's own text, which is in
// less the salt's tokens.
func (g *Generator) spec(rng *rand.Rand, i uint64, in, out int) Spec {
	s := Spec{
		Index:       i,
		Class:       g.cfg.Class,
		InputTokens: in,
		MaxTokens:   out,
		IgnoreEOS:   g.cfg.IgnoreEOS,
	}
	group := g.pickPrefix(rng)
	head := ""
	if group >= 0 {
		head = g.prefixes[group]
		s.PrefixGroup, s.PrefixTokens = group+1, g.cfg.Prefix.Tokens
		s.InputTokens += g.cfg.Prefix.Tokens
	}
	salt, saltTokens := g.salt.fit(in)
	s.Prompt = g.text(rng, i, in-saltTokens, salt+head)
	return s
}

// text is shared followed by request i's own n tokens in the generator's
// language, exact for its tokenizer.
func (g *Generator) text(rng *rand.Rand, i uint64, n int, shared string) string {
	switch {
	case g.cfg.Language == LanguageChinese:
		return shared + TextZh(g.cfg.Tokenizer, rng, n)
	case g.cfg.Tokenizer != nil && !wordsExactFor(g.cfg.Tokenizer):
		return shared + TextOfTokens(g.cfg.Tokenizer, rng, n)
	default:
		return prompt(rng, i, n, shared)
	}
}

// prompt builds a prompt of shared followed by n tokens that begin with a
// few random words and request i's index spelled in words, then continue
// with Text. A prompt shorter than that opening is cut to n words.
func prompt(rng *rand.Rand, i uint64, n int, shared string) string {
	var b strings.Builder
	b.Grow(len(shared) + n*bytesPerToken)
	b.WriteString(shared)
	head := min(prefixWords, n)
	pick := wordPicker{rng: rng}
	for range head {
		b.WriteString(pick.next())
	}
	head += writeIndex(&b, i, n-head)
	writeText(&b, rng, n-head)
	return b.String()
}

// splitmix64 scrambles the request index before it seeds PCG, so that the
// random streams of neighbouring requests (i and i+1) share no visible
// structure.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// prefixText is how a generator writes its shared prefixes: English words
// (exact in the OpenAI encodings, as the prefix length is documented), or
// Chinese prose fitted to the tokenizer.
func prefixText(cfg GeneratorConfig) func(rng *rand.Rand, n int) string {
	if cfg.Language == LanguageChinese {
		return func(rng *rand.Rand, n int) string { return TextZh(cfg.Tokenizer, rng, n) }
	}
	return Text
}
