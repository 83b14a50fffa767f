package workload

import (
	"math/rand/v2"
	"strings"
)

// Sentence lengths in words. A sentence break costs one token (the "."), so
// shorter sentences would spend more of the budget on punctuation; these
// bounds keep it near 7% while still looking like prose to a human reader.
const (
	minSentenceWords = 8
	maxSentenceWords = 20
)

// bytesPerToken is a generous estimate of the bytes one word of the list
// takes, so a prompt's builder is sized once and never regrows.
const bytesPerToken = 8

// Text returns n tokens of English-looking text drawn from rng: the same
// rng state gives the same text.
//
// Every word comes from a fixed list of common English words that are each a
// single token, leading space included, in the cl100k_base and o200k_base
// tokenizers, and every 8 to 20 words a sentence ends with "." (one more
// token). So the text is exactly n tokens for those tokenizers and close to n
// for others (Llama, Qwen and Mistral vocabularies split a few of the words).
// This is an approximation until exact tokenizers arrive; reports prefer the
// input token count the server returns in its usage.
func Text(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.Grow(n * bytesPerToken)
	writeText(&b, rng, n)
	return b.String()
}

// writeText appends n tokens of text to b.
func writeText(b *strings.Builder, rng *rand.Rand, n int) {
	pick := wordPicker{rng: rng}
	left := sentenceWords(rng)
	for range n {
		if left == 0 {
			b.WriteByte('.')
			left = sentenceWords(rng)
			continue
		}
		b.WriteString(pick.next())
		left--
	}
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

// sentenceWords draws the length of the next sentence.
func sentenceWords(rng *rand.Rand) int {
	return minSentenceWords + rng.IntN(maxSentenceWords-minSentenceWords+1)
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
