package workload

import (
	"hash/fnv"
	"math/rand/v2"
	"strings"
)

// SaltWords is how many words a prompt salt puts at the start of every
// prompt: 4 words of the 512-word list are 36 bits, so two runs with
// different salts share a first word now and then but all four almost
// never (one chance in 2^36), and a server's prefix cache kept from one
// run gives the next nothing beyond, at most, a few tokens.
const SaltWords = 4

// saltStream separates the salt's word draw from every other draw.
const saltStream = 0x5a17_5a17

// salt is a run's prompt salt rendered for one tokenizer: the words that
// open every prompt of the run, and how many tokens each cut of them is,
// so a prompt shorter than the salt still gets exactly its length.
type salt struct {
	words []string // SaltWords words, each with its leading space; nil: no salt
	// cuts[j] is the token count of the first j words (cuts[0] = 0) and
	// texts[j] their text, joined once rather than for every prompt.
	cuts  []int
	texts []string
}

// newSalt renders value (a run's salt: any string, "" for none) as
// SaltWords words of the list, a pure function of value, and counts them
// with tok (nil: one token a word, exact for cl100k_base and o200k_base).
// Every value gives words of the same count, so the salt changes which
// tokens open a prompt, never how many.
func newSalt(value string, tok Tokenizer) salt {
	if value == "" {
		return salt{cuts: []int{0}, texts: []string{""}}
	}
	h := fnv.New64a()
	h.Write([]byte(value))
	pick := wordPicker{rng: rand.New(rand.NewPCG(h.Sum64(), saltStream))}
	s := salt{words: make([]string, SaltWords), cuts: make([]int, SaltWords+1), texts: make([]string, SaltWords+1)}
	for j := range s.words {
		s.words[j] = pick.next()
		s.texts[j+1] = s.texts[j] + s.words[j]
		s.cuts[j+1] = j + 1
		if tok != nil && !wordsExactFor(tok) {
			s.cuts[j+1] = tok.Count(s.texts[j+1])
		}
	}
	return s
}

// fit returns the longest cut of the salt that fits in n tokens and its
// token count: the whole salt in any prompt of at least its length.
func (s salt) fit(n int) (string, int) {
	j := len(s.words)
	for j > 0 && s.cuts[j] > n {
		j--
	}
	return s.texts[j], s.cuts[j]
}

// text is the whole salt ("" for none).
func (s salt) text() string { return s.texts[len(s.words)] }

// line is the salt as a line of its own ahead of a dataset's text (the
// words, their leading space dropped, then a blank line, so no word of
// the text joins the salt's last) and its token count for tok (nil:
// cl100k_base). Counting the line alone is exact whenever the text does
// not itself open with white space, which the tokenizer could join to the
// blank line.
func (s salt) line(tok Tokenizer) (string, int) {
	if len(s.words) == 0 {
		return "", 0
	}
	if tok == nil {
		tok = defaultTokenizer()
	}
	l := strings.TrimPrefix(s.text(), " ") + "\n\n"
	return l, tok.Count(l)
}
