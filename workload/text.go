package workload

import (
	"math/rand/v2"
	"strings"
)

// bytesPerToken is a generous estimate of the bytes one word of the list
// takes, so a prompt's builder is sized once and never regrows.
const bytesPerToken = 8

// Text returns n tokens of English prose drawn from rng: the same rng state
// gives the same text.
//
// Sentences come from a small grammar (grammar_en.go) over common English
// words that are each a single token, leading space included, in the
// cl100k_base and o200k_base tokenizers; a full stop or a paragraph break is
// one more token. So the text is exactly n tokens for those tokenizers and
// close to n for others (Llama, Qwen and Mistral vocabularies split a few of
// the words); TextOfTokens makes it exact for any tokenizer.
func Text(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.Grow(n * bytesPerToken)
	writeText(&b, rng, n)
	return b.String()
}

// writeText appends n tokens of prose to b.
func writeText(b *strings.Builder, rng *rand.Rand, n int) {
	writeProse(b, rng, n)
}

// wordPicker draws random words 7 at a time from one 64-bit number, which
// makes prompt building about three times faster than a draw per word.
type wordPicker struct {
	rng  *rand.Rand
	bits uint64
	left int // words left in bits
}

// next returns a uniformly random word.
func (w *wordPicker) next() string {
	if w.left == 0 {
		w.bits, w.left = w.rng.Uint64(), 64/wordBits
	}
	word := words[w.bits&(1<<wordBits-1)]
	w.bits >>= wordBits
	w.left--
	return word
}

// writeIndex appends i spelled as words, one word per base-len(words) digit,
// least significant first, and returns how many words it wrote (at least
// one). Spelling the index in words rather than digits keeps the one token
// per word property; putting its low digit first makes neighbouring requests
// differ at once.
func writeIndex(b *strings.Builder, i uint64, limit int) int {
	n := 0
	for n < limit {
		b.WriteString(words[i%uint64(len(words))])
		n++
		i /= uint64(len(words))
		if i == 0 {
			break
		}
	}
	return n
}
