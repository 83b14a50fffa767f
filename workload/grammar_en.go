package workload

import (
	"math/rand/v2"
	"strings"
)

// The English grammar below turns the one-token word property of words.go
// into prose: every slot of a sentence is one word of one token (leading
// space included) in cl100k_base and o200k_base, the full stop is one
// token, and a paragraph break rides on the full stop (".\n\n" is a single
// token in both), so a sentence of k slots costs exactly k+1 tokens and a
// text can be cut to any length by choosing its sentences' lengths.
// grammar_en_test.go checks every word against both tokenizers.

// Sentence lengths in tokens, full stop included. A bare clause ("The
// teacher found a book.") is 6; optional adjectives, a place, an adverb and
// a second clause bring it to 18.
const (
	minEnSentence = 6
	maxEnSentence = 18
	clauseTokens  = 6 // " and the boy read a letter"
	placeTokens   = 3 // " near the river"
)

// Paragraph lengths in sentences.
const (
	minParagraph = 3
	maxParagraph = 6
)

// Word groups by part of speech. openers start a sentence, with a leading
// space mid-paragraph and without one after a paragraph break (both forms
// are one token); the other groups carry their leading space. Nouns and
// adjectives begin with a consonant so "a" never needs to be "an".
var (
	enOpeners = []string{"The", "This", "Our", "Her", "His", "Their", "My", "One", "Every", "A"}
	enDets    = []string{" the", " a", " this", " that", " her", " his", " our", " their", " my", " one"}
	enAgents  = []string{
		" teacher", " doctor", " friend", " father", " mother", " child", " girl", " boy",
		" woman", " man", " worker", " player", " leader", " director", " student", " family",
		" company", " group", " driver", " writer", " farmer", " neighbor", " team", " pilot",
	}
	enVerbs = []string{
		" found", " made", " saw", " built", " read", " wrote", " bought", " sold",
		" watched", " followed", " helped", " opened", " moved", " kept", " brought", " held",
		" left", " met", " sent", " changed", " reached", " needed", " wanted", " liked",
		" loved", " showed", " started", " closed", " carried", " visited", " checked", " cleaned",
	}
	enThings = []string{
		" book", " door", " table", " letter", " car", " house", " room", " window",
		" paper", " picture", " phone", " computer", " report", " plan", " story", " map",
		" box", " key", " garden", " road", " bridge", " song", " film", " model",
		" project", " record", " bag", " chair", " boat", " bottle", " bread", " piece",
	}
	enAdjs = []string{
		" small", " large", " little", " young", " good", " great", " long", " short",
		" white", " black", " red", " green", " blue", " dark", " bright", " warm",
		" cold", " quiet", " simple", " strong", " clear", " big", " new", " heavy",
	}
	enPreps  = []string{" in", " near", " behind", " across", " along", " beyond", " through", " under", " at", " by"}
	enPlaces = []string{
		" river", " school", " street", " market", " office", " city", " town", " station",
		" park", " hall", " village", " kitchen", " church", " hospital", " library", " field",
	}
	enAdverbs = []string{
		" yesterday", " today", " again", " later", " together", " slowly", " quickly", " carefully",
		" soon", " twice", " once", " early", " tonight", " recently", " finally", " quietly",
	}
	enConjs = []string{" and", " while", " because", " but", " so", " when", " after", " before"}
)

// proseWriter writes English prose one sentence at a time, keeping track of
// where the current paragraph ends.
type proseWriter struct {
	b         *strings.Builder
	rng       *rand.Rand
	paraLeft  int  // sentences left in this paragraph
	afterPara bool // the last token was a paragraph break
}

// writeProse appends exactly n tokens (for cl100k_base and o200k_base) of
// English prose to b.
func writeProse(b *strings.Builder, rng *rand.Rand, n int) {
	w := proseWriter{b: b, rng: rng, paraLeft: paragraphSentences(rng)}
	for n > 0 {
		k := w.nextLength(n)
		w.sentence(k)
		n -= k
	}
}

// nextLength picks the next sentence's length so the remaining budget r
// always ends on a whole sentence: never leave fewer than minEnSentence
// tokens behind, and take all of r once it fits in one sentence. Only a
// budget below minEnSentence (a tiny prompt) yields a cut sentence.
func (w *proseWriter) nextLength(r int) int {
	if r <= maxEnSentence {
		return r
	}
	k := minEnSentence + w.rng.IntN(maxEnSentence-minEnSentence+1)
	if r-k < minEnSentence {
		k = r - minEnSentence
	}
	return k
}

// sentence writes one sentence of exactly k tokens, its full stop (and any
// paragraph break) included. Below minEnSentence it writes the first k
// tokens of a bare clause with no full stop.
func (w *proseWriter) sentence(k int) {
	if k < minEnSentence {
		w.cutClause(k)
		return
	}
	extra := k - minEnSentence
	clause := extra > clauseTokens || extra == clauseTokens && w.rng.IntN(2) == 0
	if clause {
		extra -= clauseTokens
	}
	place := extra > placeTokens || extra == placeTokens && w.rng.IntN(2) == 0
	if place {
		extra -= placeTokens
	}
	has := w.options(extra)
	w.opener()
	w.noun(has[0], enAgents)
	w.word(enVerbs)
	w.word(enDets)
	w.noun(has[1], enThings)
	if place {
		w.place()
	}
	if clause {
		w.clause()
	}
	if has[2] {
		w.word(enAdverbs)
	}
	w.stop()
}

// options picks which extra (0..3) of the three one-token options a
// sentence carries: subject adjective, object adjective, adverb, in that
// index order. They are the first extra of a random order of the three,
// shuffled exactly as rng.Perm(3) shuffles (the same draws, so the same
// text), but in an array on the stack: Perm allocated once per sentence,
// most of a prompt's allocations.
func (w *proseWriter) options(extra int) (has [3]bool) {
	order := [3]int{0, 1, 2}
	w.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for _, o := range order[:extra] {
		has[o] = true
	}
	return has
}

// cutClause writes the first k (< minEnSentence) tokens of a bare clause.
func (w *proseWriter) cutClause(k int) {
	groups := [][]string{nil, enAgents, enVerbs, enDets, enThings}
	for i := range k {
		if i == 0 {
			w.opener()
			continue
		}
		w.word(groups[i])
	}
}

// opener writes a capitalised determiner, with no leading space right after
// a paragraph break.
func (w *proseWriter) opener() {
	if !w.afterPara {
		w.b.WriteByte(' ')
	}
	w.afterPara = false
	w.b.WriteString(pick(w.rng, enOpeners))
}

// noun writes a noun of group, preceded by an adjective when adj is set.
func (w *proseWriter) noun(adj bool, group []string) {
	if adj {
		w.word(enAdjs)
	}
	w.word(group)
}

// place writes a prepositional phrase of placeTokens tokens.
func (w *proseWriter) place() {
	w.word(enPreps)
	w.b.WriteString(" the")
	w.word(enPlaces)
}

// clause writes a second clause of clauseTokens tokens.
func (w *proseWriter) clause() {
	w.word(enConjs)
	w.word(enDets)
	w.word(enAgents)
	w.word(enVerbs)
	w.word(enDets)
	w.word(enThings)
}

// stop ends the sentence, and the paragraph when its sentences are done.
func (w *proseWriter) stop() {
	w.paraLeft--
	if w.paraLeft > 0 {
		w.b.WriteByte('.')
		return
	}
	w.b.WriteString(".\n\n")
	w.afterPara = true
	w.paraLeft = paragraphSentences(w.rng)
}

// word writes a random word of group.
func (w *proseWriter) word(group []string) {
	w.b.WriteString(pick(w.rng, group))
}

// paragraphSentences draws the number of sentences of the next paragraph.
func paragraphSentences(rng *rand.Rand) int {
	return minParagraph + rng.IntN(maxParagraph-minParagraph+1)
}

// pick returns a uniformly random element of group.
func pick(rng *rand.Rand, group []string) string {
	return group[rng.IntN(len(group))]
}
