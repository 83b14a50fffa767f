package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Tokenizer counts, splits and reassembles text the way one model family
// does, so prompts can be built to an exact token length and dataset
// entries measured. Implementations are safe for concurrent use.
type Tokenizer interface {
	// Encode returns the token ids of s, without any special tokens a chat
	// template or post-processor would add (a BOS token, for instance).
	Encode(s string) []int
	// Decode returns the text of ids. A slice that cuts a multi-byte
	// character in two decodes to invalid UTF-8, as the model would see it.
	Decode(ids []int) string
	// Count returns len(Encode(s)), possibly faster.
	Count(s string) int
	// Name says which tokenizer this is: an encoding name or a file path.
	Name() string
}

// Embedded encodings LoadTokenizer accepts by name. Their tables are
// compiled into the binary, so they work offline.
const (
	// Cl100kBase is the encoding of GPT-4 and GPT-3.5; Llama 3 extends it.
	Cl100kBase = "cl100k_base"
	// O200kBase is the encoding of GPT-4o and later OpenAI models.
	O200kBase = "o200k_base"
)

// LoadTokenizer returns the tokenizer spec names: "cl100k_base",
// "o200k_base", the path of a Hugging Face tokenizer.json holding a BPE
// model, byte-level (Llama 3, Qwen 2, GPT-2 and their relatives) or
// SentencePiece-style (Llama 2, Mistral), or the path of a SentencePiece
// model whose name ends in ".model" (BPE or Unigram).
func LoadTokenizer(spec string) (Tokenizer, error) {
	return LoadTokenizerContext(context.Background(), spec)
}

// LoadTokenizerContext is LoadTokenizer whose read of a tokenizer.json
// stops when ctx is done.
func LoadTokenizerContext(ctx context.Context, spec string) (Tokenizer, error) {
	switch spec {
	case Cl100kBase, O200kBase:
		return embeddedTokenizer(spec)
	case "":
		return nil, errors.New("tokenizer: empty name; want cl100k_base, o200k_base, or the path of a tokenizer.json or tokenizer.model")
	}
	if strings.HasSuffix(spec, ".model") {
		return loadSPMTokenizer(ctx, spec)
	}
	return loadHFTokenizer(ctx, spec)
}

// embedded caches the embedded codecs: building one costs about 0.2 s and
// its tables are immutable, so every caller can share it.
var embedded sync.Map // encoding name -> *tiktokenTokenizer

// embeddedTokenizer returns the shared tokenizer of an embedded encoding.
func embeddedTokenizer(name string) (Tokenizer, error) {
	if t, ok := embedded.Load(name); ok {
		return t.(*tiktokenTokenizer), nil
	}
	codec, err := tokenizer.Get(tokenizer.Encoding(name))
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	t, _ := embedded.LoadOrStore(name, &tiktokenTokenizer{codec: codec, name: name})
	return t.(*tiktokenTokenizer), nil
}

// tiktokenTokenizer adapts an embedded tiktoken codec. The codec's default
// error mode (ErrorModeNone) never fails on any input, so its errors are
// unreachable and Encode and Count cannot lose text.
type tiktokenTokenizer struct {
	codec tokenizer.Codec
	name  string
}

func (t *tiktokenTokenizer) Encode(s string) []int {
	ids, _, _ := t.codec.Encode(s)
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

func (t *tiktokenTokenizer) Decode(ids []int) string {
	u := make([]uint, 0, len(ids))
	for _, id := range ids {
		if id >= 0 {
			u = append(u, uint(id))
		}
	}
	s, _ := t.codec.Decode(u)
	return s
}

func (t *tiktokenTokenizer) Count(s string) int {
	n, _ := t.codec.Count(s)
	return n
}

func (t *tiktokenTokenizer) Name() string { return t.name }

// maxFitRounds bounds TextOfTokens's trim-and-recount loop. Each round moves
// the cut by the error of the last one, and a cut almost always lands on the
// first or second try; the bound only turns a pathological vocabulary into a
// slightly-off length instead of a hang.
const maxFitRounds = 32

// TextOfTokens returns English-looking text drawn from rng that tok encodes
// to exactly n tokens (n <= 0 gives ""). The same rng state gives the same
// text.
//
// Text is already exact for cl100k_base and o200k_base (its words are one
// token each there), so those skip the tokenizer entirely. For any other
// tokenizer the text is generated with Text, encoded, cut to n ids,
// decoded, and recounted: cutting inside a word can make the decoded prefix
// re-encode to a different count, so the cut moves by the difference until
// the count is exact, and more text is appended if the first draw was too
// short.
func TextOfTokens(tok Tokenizer, rng *rand.Rand, n int) string {
	if n <= 0 {
		return ""
	}
	if wordsExactFor(tok) {
		return Text(rng, n)
	}
	var b strings.Builder
	writeText(&b, rng, n)
	ids := tok.Encode(b.String())
	for len(ids) < n {
		writeText(&b, rng, n-len(ids))
		ids = tok.Encode(b.String())
	}
	return fitTokens(tok, ids, n)
}

// wordsExactFor reports whether the synthetic word list is one token per
// word for tok, so Text is already exact without encoding anything.
func wordsExactFor(tok Tokenizer) bool {
	t, ok := tok.(*tiktokenTokenizer)
	return ok && (t.name == Cl100kBase || t.name == O200kBase)
}

// fitTokens decodes a prefix of ids that re-encodes to exactly n tokens,
// or the closest one found within maxFitRounds. len(ids) >= n.
func fitTokens(tok Tokenizer, ids []int, n int) string {
	cut := n
	best, bestErr := "", n+1
	for range maxFitRounds {
		s := tok.Decode(ids[:cut])
		diff := tok.Count(s) - n
		if diff == 0 {
			return s
		}
		if d := max(diff, -diff); d < bestErr {
			best, bestErr = s, d
		}
		next := min(max(cut-diff, 1), len(ids))
		if next == cut {
			break
		}
		cut = next
	}
	return best
}
