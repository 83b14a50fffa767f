package workload

import (
	"math"
	"sort"
	"strings"
)

// spmVocab is a SentencePiece model's pieces as its segmenters use them.
type spmVocab struct {
	// ids holds the pieces a segment may be: normal, user-defined and
	// unused ones. Control, byte and unknown pieces are never matched in
	// text.
	ids    map[string]int32
	scores []float32 // by id
	kinds  []spmPieceType
	// userDefined are the user-defined pieces, longest first: matched
	// whole and never split or merged.
	userDefined      []string
	userDefinedFirst [256]bool
	fallback         byteFallback
}

// matchUserDefined returns the length of the longest user-defined piece
// at the start of s, or 0.
func (v *spmVocab) matchUserDefined(s string) int {
	if s == "" || !v.userDefinedFirst[s[0]] {
		return 0
	}
	for _, p := range v.userDefined {
		if strings.HasPrefix(s, p) {
			return len(p)
		}
	}
	return 0
}

// sortUserDefined orders the user-defined pieces longest first.
func (v *spmVocab) sortUserDefined() {
	sort.SliceStable(v.userDefined, func(i, j int) bool { return len(v.userDefined[i]) > len(v.userDefined[j]) })
	for _, p := range v.userDefined {
		v.userDefinedFirst[p[0]] = true
	}
}

// spmBPE segments by SentencePiece BPE: start from characters (and whole
// user-defined pieces), then repeatedly merge the adjacent pair whose
// concatenation is a piece with the highest score, leftmost first.
type spmBPE struct {
	spmVocab
	hasUnused bool
}

// segment returns the ids of one normalized word.
func (m *spmBPE) segment(w string) []int32 {
	syms := make([]mergeSymbol, 0, len(w))
	for i := 0; i < len(w); {
		n := m.matchUserDefined(w[i:])
		frozen := n > 0
		if !frozen {
			n = charLen(w[i:])
		}
		k := int32(len(syms))
		syms = append(syms, mergeSymbol{start: int32(i), end: int32(i + n), prev: k - 1, next: k + 1, frozen: frozen})
		i += n
	}
	if len(syms) == 0 {
		return nil
	}
	syms[len(syms)-1].next = -1
	rule := func(word string, l, r *mergeSymbol) (float32, int32, bool) {
		id, ok := m.ids[word[l.start:r.end]]
		if !ok {
			return 0, 0, false
		}
		return m.scores[id], id, true
	}
	// A merge into an unused piece is undone at the end, back into the
	// two parts it was made of (SentencePiece's resegmentation).
	var parts map[string][2]string
	var merged func(l, r *mergeSymbol, id int32)
	if m.hasUnused {
		merged = func(l, r *mergeSymbol, id int32) {
			if m.kinds[id] == spmUnused {
				if parts == nil {
					parts = make(map[string][2]string)
				}
				parts[w[l.start:r.end]] = [2]string{w[l.start:l.end], w[r.start:r.end]}
			}
		}
	}
	pieces := make([]spmPiece, 0, len(syms))
	for _, s := range mergeSymbols(w, syms, rule, merged) {
		pieces = m.resegment(w[s.start:s.end], parts, pieces)
	}
	return m.fallback.finish(pieces)
}

// resegment appends the piece p, split back into its parts while it is an
// unused piece that a merge made.
func (m *spmBPE) resegment(p string, parts map[string][2]string, out []spmPiece) []spmPiece {
	id, ok := m.ids[p]
	if !ok {
		return append(out, spmPiece{text: p, id: -1})
	}
	if pp, split := parts[p]; split && m.kinds[id] == spmUnused {
		out = m.resegment(pp[0], parts, out)
		return m.resegment(pp[1], parts, out)
	}
	return append(out, spmPiece{text: p, id: id})
}

// unkPenalty is how far below the lowest piece score SentencePiece's
// Unigram scores an unknown character (kUnkPenalty).
const unkPenalty = 10

// spmUnigram segments by SentencePiece Unigram: the split of the word into
// pieces whose scores sum highest (Viterbi), an unknown character scoring
// unkPenalty below the lowest piece.
type spmUnigram struct {
	spmVocab
	// prefixes holds every proper prefix of every piece, so the scan for
	// pieces starting at a position stops as soon as none can match.
	prefixes map[string]struct{}
	// minScore and maxScore span the normal pieces' scores; maxScore
	// starts at FLT_MIN as in SentencePiece, where it prices user-defined
	// pieces.
	minScore, maxScore float32
}

// unigramNode is the best path found to a position of the word.
type unigramNode struct {
	id    int32
	score float32
	start int32 // -1: no path yet
}

// segment returns the ids of one normalized word. The arithmetic mirrors
// SentencePiece's exactly (float32 sums, a float64 bonus for user-defined
// pieces, first path kept on ties) so that near-ties resolve the same way.
func (m *spmUnigram) segment(w string) []int32 {
	best := make([]unigramNode, len(w)+1)
	for i := range best {
		best[i].start = -1
	}
	unkScore := m.minScore - unkPenalty
	for i := 0; i < len(w); {
		till := best[i].score
		n := charLen(w[i:])
		single := false
		for j := i + 1; j <= len(w); j++ {
			p := w[i:j]
			if id, ok := m.ids[p]; ok && m.kinds[id] != spmUnused {
				m.offer(&best[j], int32(i), id, j-i, till)
				single = single || j-i == n
			}
			if _, more := m.prefixes[p]; !more {
				break
			}
		}
		if !single {
			if c := unkScore + till; best[i+n].start < 0 || c > best[i+n].score {
				best[i+n] = unigramNode{id: m.fallback.unkID, score: c, start: int32(i)}
			}
		}
		i += n
	}
	var rev []spmPiece
	for end := int32(len(w)); end > 0; {
		node := best[end]
		rev = append(rev, spmPiece{text: w[node.start:end], id: node.id})
		end = node.start
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return m.fallback.finish(rev)
}

// offer makes piece id, n bytes long and starting at start, the path to
// target if it scores higher than the one there. SentencePiece computes a
// piece's candidate in double precision (its score expression mixes a
// float with the double 0.1 bonus term) and stores it as a float; the
// order of these roundings decides between splits of equal score, such
// as "44"+"4" and "4"+"44".
func (m *spmUnigram) offer(target *unigramNode, start, id int32, n int, till float32) {
	score := float64(m.scores[id])
	if m.kinds[id] == spmUserDefined {
		// length * max_score_ - 0.1: a user-defined piece always wins.
		score = float64(float32(n)*m.maxScore) - 0.1
	}
	if c := score + float64(till); target.start < 0 || c > float64(target.score) {
		*target = unigramNode{id: id, score: float32(c), start: start}
	}
}

// fltMin is C's FLT_MIN, the smallest normal float32.
var fltMin = math.Float32frombits(0x00800000)
