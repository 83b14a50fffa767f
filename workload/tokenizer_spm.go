package workload

import (
	"strings"
	"unicode/utf8"
)

// spaceMark is SentencePiece's visible space, U+2581 "▁": spaces are
// replaced by it before segmentation, so "▁the" is "the" after a space.
const spaceMark = "\u2581"

// spmTokenizer is a SentencePiece-style tokenizer: Llama 2, Mistral and
// their relatives, read from a SentencePiece tokenizer.model or from a
// Hugging Face tokenizer.json with a byte_fallback BPE model. It is
// immutable after loading except for its word cache, which is safe for
// concurrent use.
//
// Encoding a text takes these steps:
//
//  1. (tokenizer.json) added tokens such as "</s>" are cut out and become
//     their own ids;
//  2. each remaining span is normalized: spaces become "▁" and one "▁" is
//     prepended (SentencePiece's add_dummy_prefix, Hugging Face's Prepend
//     normalizer or Metaspace pre-tokenizer);
//  3. the result is cut into words before each run of "▁" that follows
//     another character, when no piece of the vocabulary could span such
//     a cut (true of Llama 2's), so each distinct word is segmented once;
//  4. each word is segmented: BPE by merge rank (tokenizer.json) or by
//     piece score (tokenizer.model), or Unigram's best-scoring split;
//  5. a piece that is no token becomes its UTF-8 bytes, "<0xE2>" and so
//     on, when the model has byte fallback, else the unknown token.
type spmTokenizer struct {
	name string
	norm spmNormalizer
	// segment turns one normalized word into ids (steps 4 and 5).
	segment func(word string) []int32
	// splitWords says step 3 is safe; metaspaceSplit says the file asks
	// for a cut before every "▁" (Metaspace with split true).
	splitWords, metaspaceSplit bool
	added                      addedTokens
	tokens                     []string // id -> the text it decodes to
	cache                      *pieceCache
}

// spmNormalizer is step 2, as both file formats can express it.
type spmNormalizer struct {
	// removeExtraSpaces drops leading and trailing spaces and collapses
	// runs of them to one (SentencePiece's remove_extra_whitespaces).
	removeExtraSpaces bool
	// escapeSpaces replaces " " by "▁".
	escapeSpaces bool
	// prepend says when one "▁" goes in front of a span.
	prepend prependRule
}

// prependRule says which spans get a leading "▁".
type prependRule int

const (
	// prependNever adds nothing.
	prependNever prependRule = iota
	// prependAlways adds "▁" to every span (SentencePiece; a Prepend
	// normalizer), even one that starts with a space.
	prependAlways
	// prependUnlessSpace adds "▁" to every span not starting with one
	// (Metaspace, prepend_scheme "always").
	prependUnlessSpace
	// prependFirstUnlessSpace adds "▁" to the span at the start of the
	// text only, unless it starts with one (Metaspace, "first").
	prependFirstUnlessSpace
)

// normalize applies step 2 to a span; first says it starts the text.
func (n spmNormalizer) normalize(s string, first bool) string {
	s = replaceInvalidUTF8(s)
	if n.removeExtraSpaces {
		s = collapseSpaces(s)
	}
	if s == "" {
		return ""
	}
	space := " "
	if n.escapeSpaces {
		s = strings.ReplaceAll(s, " ", spaceMark)
		space = spaceMark
	}
	switch n.prepend {
	case prependAlways:
		s = space + s
	case prependUnlessSpace, prependFirstUnlessSpace:
		if (first || n.prepend == prependUnlessSpace) && !strings.HasPrefix(s, spaceMark) {
			s = spaceMark + s
		}
	}
	if n.removeExtraSpaces {
		// SentencePiece trims the output's trailing space marks, so a "▁"
		// typed at the end goes too, and text of only "▁" becomes nothing.
		s = strings.TrimRight(s, space)
	}
	return s
}

// replaceInvalidUTF8 replaces each byte that is not part of valid UTF-8
// by U+FFFD, as SentencePiece's normalizer does and as encoding/json does
// to the prompt the server receives. A decoded prefix cut inside a
// character therefore counts as the server will count it.
func replaceInvalidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r) // an invalid byte ranges as utf8.RuneError, one byte wide
	}
	return b.String()
}

// collapseSpaces trims spaces at both ends and turns each inner run of
// them into one. Only U+0020 counts, as in SentencePiece's identity
// normalization.
func collapseSpaces(s string) string {
	s = strings.Trim(s, " ")
	if !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' && i > 0 && s[i-1] == ' ' {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (t *spmTokenizer) Name() string { return t.name }

func (t *spmTokenizer) Encode(s string) []int {
	ids := make([]int, 0, len(s)/3+1)
	t.encode(s, func(id int32) { ids = append(ids, int(id)) })
	return ids
}

func (t *spmTokenizer) Count(s string) int {
	n := 0
	t.encode(s, func(int32) { n++ })
	return n
}

// Decode writes each token's text, "▁" as a space and byte tokens as their
// byte, and drops the one leading space the normalizer prepends, as the
// reference decoders do, so that encoding the result prepends it again.
func (t *spmTokenizer) Decode(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		if id >= 0 && id < len(t.tokens) {
			b.WriteString(t.tokens[id])
		}
	}
	s := b.String()
	if t.norm.prepend != prependNever {
		s = strings.TrimPrefix(s, " ")
	}
	return s
}

// encode emits the ids of s in order (step 1, then the rest per span).
func (t *spmTokenizer) encode(s string, emit func(int32)) {
	first := true
	for s != "" {
		at, tok := t.added.next(s)
		if at > 0 {
			t.encodeSpan(s[:at], first, emit)
		}
		if tok == nil {
			return
		}
		emit(tok.id)
		s = s[at+len(tok.content):]
		first = false
	}
}

// encodeSpan runs steps 2 to 5 on text free of added tokens.
func (t *spmTokenizer) encodeSpan(s string, first bool, emit func(int32)) {
	s = t.norm.normalize(s, first)
	switch {
	case t.metaspaceSplit:
		splitWords(s, false, t.encodeWord, emit)
	case t.splitWords:
		splitWords(s, true, t.encodeWord, emit)
	default:
		for _, id := range t.segment(s) {
			emit(id)
		}
	}
}

// encodeWord emits the ids of one word, segmenting it once.
func (t *spmTokenizer) encodeWord(w string, emit func(int32)) {
	ids, ok := t.cache.get(w)
	if !ok {
		ids = t.segment(w)
		t.cache.put(w, ids)
	}
	for _, id := range ids {
		emit(id)
	}
}

// splitWords calls word on each part of s cut before every "▁" (runs
// false: Hugging Face's MergedWithNext, "a▁▁b" is "a", "▁", "▁b") or
// before every run of "▁" that follows another character (runs true:
// "a▁▁b▁c" is "a", "▁▁b", "▁c").
func splitWords(s string, runs bool, word func(string, func(int32)), emit func(int32)) {
	start := 0
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], spaceMark)
		if j < 0 {
			break
		}
		at := i + j
		if at > start && !(runs && strings.HasSuffix(s[start:at], spaceMark)) {
			word(s[start:at], emit)
			start = at
		}
		i = at + len(spaceMark)
	}
	if start < len(s) {
		word(s[start:], emit)
	}
}

// wordsSplittable reports whether step 3 is exact for a vocabulary: a
// cut lies between a character other than "▁" and a "▁", so a piece
// crossing it would hold such a pair, and if none does, no merge or
// segmentation can cross a cut.
func wordsSplittable(pieces func(yield func(string) bool)) bool {
	for p := range pieces {
		for i := 1; i < len(p); i++ {
			if strings.HasPrefix(p[i:], spaceMark) && !strings.HasSuffix(p[:i], spaceMark) {
				return false
			}
		}
	}
	return true
}

// spmPiece is a segment of a word: its text and its id, or -1 when it is
// no token of the vocabulary.
type spmPiece struct {
	text string
	id   int32
}

// byteFallback is step 5 for segmenters that leave unknown pieces.
type byteFallback struct {
	enabled bool
	byteIDs [256]int32
	unkID   int32
}

// finish turns pieces into ids: an unknown piece becomes its bytes' ids
// with byte fallback, else the unknown id, and a run of unknown pieces
// without byte fallback is one unknown token, as in SentencePiece.
func (f *byteFallback) finish(pieces []spmPiece) []int32 {
	ids := make([]int32, 0, len(pieces))
	prevUnknown := false
	for _, p := range pieces {
		unknown := p.id < 0 || p.id == f.unkID
		switch {
		case !unknown:
			ids = append(ids, p.id)
		case f.enabled:
			for i := 0; i < len(p.text); i++ {
				ids = append(ids, f.byteIDs[p.text[i]])
			}
		case !prevUnknown:
			ids = append(ids, f.unkID)
		}
		prevUnknown = unknown
	}
	return ids
}

// charLen is the length of the character at the start of s: one byte for
// a byte that starts no valid UTF-8 sequence, so invalid text still
// segments byte by byte.
func charLen(s string) int {
	_, n := utf8.DecodeRuneInString(s)
	return max(n, 1)
}
