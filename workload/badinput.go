package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// BadInputClass is the class name of bad-input requests.
const BadInputClass = "bad_input"

// The kinds of bad input, in the order BadInputKinds lists them. Each is
// something real clients send by mistake and a server must refuse (or
// survive) without falling over.
const (
	// BadEmpty is an empty prompt.
	BadEmpty = "empty_prompt"
	// BadTooLong is a prompt longer than the declared context window.
	BadTooLong = "beyond_context"
	// BadUnicode is a prompt of unusual Unicode and control characters.
	BadUnicode = "odd_unicode"
	// BadZeroMaxTokens asks for max_tokens 0.
	BadZeroMaxTokens = "max_tokens_zero"
	// BadHugeMaxTokens asks for far more tokens than any context holds.
	BadHugeMaxTokens = "max_tokens_huge"
)

// BadInputKinds lists every kind of bad input; each is equally likely.
var BadInputKinds = []string{BadEmpty, BadTooLong, BadUnicode, BadZeroMaxTokens, BadHugeMaxTokens}

// Sizes of the bad requests. Each is a plain request but for its one
// defect, so that a rejection is about that defect.
const (
	badPromptTokens = 32
	badMaxTokens    = 16
	// HugeMaxTokens is what a max_tokens_huge request asks for: the
	// largest 32-bit integer, beyond every context window.
	HugeMaxTokens = math.MaxInt32
	unicodePieces = 64
)

// oddPieces are fragments servers and tokenizers have tripped over: control
// characters, a NUL, byte-order marks, zero-width and bidirectional
// controls, combining marks stacked on one letter, line and paragraph
// separators, astral-plane emoji with skin tones and joiners, CJK and a
// private-use code point. (Invalid UTF-8 is left out: JSON cannot carry it,
// and Go's encoder would send U+FFFD instead.)
var oddPieces = []string{
	"\x00", "\x01", "\x07", "\x1b[31m", "\x7f", "\t\t", "\r\n", "\ufeff", "\u200b", "\u200d",
	"\u202e", "\u2066", "e\u0301\u0302\u0303\u0304", "\u2028", "\u2029", "👩🏽\u200d💻", "🏳️\u200d🌈",
	"\U0001F600", "中文", "日本語", "한국어", "עברית", "العربية", "\ue000", "\\u0000", "\"}", "</s>",
	"<|endoftext|>", "<|im_start|>", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "ﷺ", "\u00a0", "Ǆ", "ß", "ﬃ",
}

// BadInputConfig configures the bad-input class.
type BadInputConfig struct {
	// Fraction of all requests that are bad input, in [0, 1).
	Fraction float64
	// MaxContext is the target model's context window in tokens; prompts
	// of the beyond_context kind exceed it by a quarter. Required when
	// Fraction > 0.
	MaxContext int
}

// Validate checks the configuration.
func (c BadInputConfig) Validate() error {
	if math.IsNaN(c.Fraction) || c.Fraction < 0 || c.Fraction >= 1 {
		return fmt.Errorf("bad-input fraction %v: want a share in [0, 1)", c.Fraction)
	}
	if c.Fraction > 0 && (c.MaxContext < 1 || c.MaxContext > MaxLength/2) {
		return fmt.Errorf("bad input needs the model's context window (max_context) in tokens, 1 to %d; got %d", MaxLength/2, c.MaxContext)
	}
	return nil
}

// badInput builds bad-input specs.
type badInput struct {
	seed uint64
	cfg  BadInputConfig
}

// Spec returns request i as a bad request of a kind drawn from (seed, i).
func (b badInput) Spec(i uint64) Spec {
	rng := rand.New(rand.NewPCG(b.seed, splitmix64(i)))
	kind := BadInputKinds[rng.IntN(len(BadInputKinds))]
	s := Spec{Index: i, Class: BadInputClass, BadInput: kind, Expect: ExpectRejection, MaxTokens: badMaxTokens}
	switch kind {
	case BadEmpty:
	case BadTooLong:
		s.InputTokens = b.cfg.MaxContext + b.cfg.MaxContext/4 + 1
		s.Prompt = prompt(rng, i, s.InputTokens, "")
	case BadUnicode:
		s.Prompt, s.InputTokens = oddText(rng), unicodePieces
	case BadZeroMaxTokens, BadHugeMaxTokens:
		s.InputTokens = badPromptTokens
		s.Prompt = prompt(rng, i, s.InputTokens, "")
		s.MaxTokens = 0
		if kind == BadHugeMaxTokens {
			s.MaxTokens = HugeMaxTokens
		}
	}
	return s
}

// oddText strings unicodePieces odd fragments together. Its token count is
// unknowable in advance; InputTokens holds the piece count as a stand-in.
func oddText(rng *rand.Rand) string {
	var sb strings.Builder
	for range unicodePieces {
		sb.WriteString(oddPieces[rng.IntN(len(oddPieces))])
	}
	return sb.String()
}
