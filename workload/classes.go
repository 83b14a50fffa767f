package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
)

// classStream separates the draw that picks a request's class from the
// draws that build its content, so adding a class does not shift the
// lengths or words of another class's requests at the same index.
const classStream = 0xc1a55_5eed

// ClassConfig is one request class: a kind of traffic with its own lengths,
// e.g. short chats and long documents.
type ClassConfig struct {
	// Name labels the class in records and reports.
	Name string
	// Weight is the class's share of requests relative to the others'.
	Weight float64
	// Input and Output are its prompt and max_tokens length distributions.
	Input, Output Dist
	// IgnoreEOS is copied into its specs.
	IgnoreEOS bool
	// Prefix optionally opens its prompts with a shared prefix.
	Prefix SharedPrefix
	// Tokenizer, when set, makes synthetic prompts exactly Input tokens
	// long for that tokenizer (nil: the cl100k/o200k word list, exact there).
	Tokenizer Tokenizer
	// Language is the language of its synthetic prose (see
	// GeneratorConfig.Language).
	Language string
	// Dataset, when set, supplies the class's prompts instead of synthetic
	// text; Output then only decides entries without an output length.
	Dataset *Dataset
	// Turns, above 1, makes the class multi-turn conversations of Turns
	// requests each, whose history grows per turn (see Mix.Session); 0
	// or 1 is single requests.
	Turns int
	// SyntheticHistory makes a conversation's history carry synthetic
	// assistant text of the asked length in place of the server's replies
	// (the default threads the real replies, Session.Reply): the same plan
	// and seed then send byte-identical bodies whatever the server answers.
	SyntheticHistory bool
	// Images adds synthetic images to each request (zero: none).
	Images ImageConfig
	// Documents adds documents to each request for the rerank and score
	// APIs (zero: none).
	Documents DocumentConfig
	// Audio adds a synthetic WAV to each request for the transcriptions
	// API (zero: none).
	Audio AudioConfig
}

// MixConfig configures a Mix.
type MixConfig struct {
	// Seed selects the workload: the same seed gives the same specs.
	Seed uint64
	// Salt, when not empty, opens every prompt of every class, synthetic
	// or from a dataset, with words drawn from it (GeneratorConfig.Salt):
	// the run's salt. Bad input is left as it is: its defects are the
	// point.
	Salt string
	// Classes are the ordinary classes (at least one).
	Classes []ClassConfig
	// BadInput optionally mixes in bad requests as their own class.
	BadInput BadInputConfig
}

// Mix is a Source of several request classes drawn by weight. The class of
// request i, like the rest of its spec, is a pure function of (Seed, i).
// It is immutable after NewMix and safe for concurrent use.
type Mix struct {
	seed    uint64
	sources []Source
	names   []string
	cum     []float64 // cumulative weights of sources, normalised to end at 1
	bad     badInput
	badFrac float64
	turns   []int // each source's turns per conversation; nil: no conversations
	// synthetic is each source's ClassConfig.SyntheticHistory; tokenizers
	// its ClassConfig.Tokenizer, which counts a threaded reply's tokens
	// when the server reported none (nil: cl100k_base).
	synthetic  []bool
	tokenizers []Tokenizer
	convCum    []float64 // cumulative per-conversation class weights; nil: no conversations
}

var _ Source = (*Mix)(nil)

// classNameRe is what may name a class: it becomes a JSON key and a table
// row, so it stays short and plain.
var classNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$`)

// NewMix checks cfg and builds the classes' generators.
func NewMix(cfg MixConfig) (*Mix, error) {
	if len(cfg.Classes) == 0 {
		return nil, errors.New("workload: no request classes")
	}
	if err := cfg.BadInput.Validate(); err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	m := &Mix{seed: cfg.Seed, bad: badInput{seed: cfg.Seed, cfg: cfg.BadInput}, badFrac: cfg.BadInput.Fraction}
	total, seen := 0.0, map[string]bool{BadInputClass: cfg.BadInput.Fraction > 0}
	for _, c := range cfg.Classes {
		if err := checkClass(c, seen); err != nil {
			return nil, err
		}
		src, err := classSource(cfg.Seed, cfg.Salt, c)
		if err != nil {
			return nil, fmt.Errorf("class %s: %w", c.Name, err)
		}
		total += c.Weight
		m.sources = append(m.sources, src)
		m.names = append(m.names, c.Name)
		m.cum = append(m.cum, total)
		m.synthetic = append(m.synthetic, c.SyntheticHistory)
		m.tokenizers = append(m.tokenizers, c.Tokenizer)
	}
	for k := range m.cum {
		m.cum[k] /= total
	}
	m.conversationWeights(cfg.Classes)
	return m, nil
}

// classSource builds what draws a class's requests: its dataset, or
// synthetic text.
func classSource(seed uint64, salt string, c ClassConfig) (Source, error) {
	src, err := textSource(seed, salt, c)
	if err != nil {
		return nil, err
	}
	if err := c.Documents.Validate(); err != nil {
		return nil, err
	}
	if c.Documents.Count > 0 {
		src = &withDocuments{src: src, seed: seed, cfg: c.Documents}
	}
	if c.Audio.Seconds != nil {
		if src, err = newWithAudio(src, seed, c.Audio); err != nil {
			return nil, err
		}
	}
	if c.Images.Count == 0 {
		return src, nil
	}
	variants, err := SyntheticImages(seed, c.Images)
	if err != nil {
		return nil, err
	}
	return &withImages{src: src, seed: seed, count: c.Images.Count, variants: variants}, nil
}

// textSource builds what draws a class's text: its dataset, or synthetic
// prose.
func textSource(seed uint64, salt string, c ClassConfig) (Source, error) {
	if c.Dataset != nil {
		return newDatasetSource(seed, salt, c)
	}
	return NewGenerator(c.GeneratorConfig(seed, salt))
}

// GeneratorConfig is the synthetic-text generator of the class, for the
// run's seed and salt.
func (c ClassConfig) GeneratorConfig(seed uint64, salt string) GeneratorConfig {
	return GeneratorConfig{Seed: seed, Input: c.Input, Output: c.Output, IgnoreEOS: c.IgnoreEOS,
		Class: c.Name, Prefix: c.Prefix, Tokenizer: c.Tokenizer, Language: c.Language, Salt: salt}
}

// checkClass checks one class's name and weight.
func checkClass(c ClassConfig, seen map[string]bool) error {
	if !classNameRe.MatchString(c.Name) {
		return fmt.Errorf("workload: class name %q: use 1-40 letters, digits, '.', '_' or '-'", c.Name)
	}
	if seen[c.Name] {
		return fmt.Errorf("workload: class %s is defined twice (%s is reserved for bad input)", c.Name, BadInputClass)
	}
	seen[c.Name] = true
	if !(c.Weight > 0) || math.IsInf(c.Weight, 0) || c.Weight > 1e12 {
		return fmt.Errorf("workload: class %s: weight %v: want a positive number", c.Name, c.Weight)
	}
	if c.Turns < 0 || c.Turns > MaxTurns {
		return fmt.Errorf("workload: class %s: turns %d: want 0 to %d", c.Name, c.Turns, MaxTurns)
	}
	return nil
}

// Spec returns request i's spec: a bad request with probability
// BadInput.Fraction, else one of the classes chosen by weight.
func (m *Mix) Spec(i uint64) Spec {
	u := rand.New(rand.NewPCG(m.seed^classStream, splitmix64(i))).Float64()
	if u < m.badFrac {
		return m.bad.Spec(i)
	}
	u = (u - m.badFrac) / (1 - m.badFrac)
	for k, c := range m.cum {
		if u < c {
			return m.sources[k].Spec(i)
		}
	}
	return m.sources[len(m.sources)-1].Spec(i)
}

// ClassNames lists the classes the mix can produce, bad input last.
func (m *Mix) ClassNames() []string {
	out := append(make([]string, 0, len(m.names)+1), m.names...)
	if m.badFrac > 0 {
		out = append(out, BadInputClass)
	}
	return out
}
