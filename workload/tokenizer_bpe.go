package workload

import (
	"math"
	"strings"
	"sync"

	"github.com/dlclark/regexp2/v2"
)

// bpeTokenizer is a byte-level BPE tokenizer loaded from a tokenizer.json.
// It is immutable after loading except for its piece cache, which is safe
// for concurrent use.
//
// Encoding a text takes four steps, as in Hugging Face tokenizers:
//
//  1. added tokens ("<|eot_id|>") are cut out and become their own ids;
//  2. the rest is NFC-normalized if the file asks for it;
//  3. split regexes cut it into pieces (words with their leading space,
//     runs of digits, punctuation, whitespace);
//  4. each piece starts as one symbol per byte and the adjacent pair with
//     the lowest merge rank is merged, leftmost first, until no pair has a
//     merge.
//
// The vocabulary is stored under the raw bytes each token stands for, not
// under its byte-level JSON spelling, so step 4 never translates text.
type bpeTokenizer struct {
	name           string
	nfc            bool
	addPrefixSpace bool
	ignoreMerges   bool
	splits         []*regexp2.Regexp
	ids            map[string]int32 // raw bytes -> id
	tokens         []string         // id -> raw bytes (or added token text)
	byteIDs        [256]int32       // id of each single byte
	merges         map[uint64]bpeMerge
	added          addedTokens
	cache          *pieceCache
}

// bpeMerge is what a mergeable pair becomes, and how early it merges.
type bpeMerge struct {
	rank int32
	id   int32
}

// addedToken is a literal token matched before pre-tokenization.
type addedToken struct {
	content string
	id      int32
}

// addedTokens are the literal tokens of a tokenizer.json, longest first.
type addedTokens struct {
	list  []addedToken
	first [256]bool // first bytes of added tokens, to skip most positions
}

// next finds the first added token in s: its offset and the token, or
// (len(s), nil) when there is none.
func (a *addedTokens) next(s string) (int, *addedToken) {
	if len(a.list) == 0 {
		return len(s), nil
	}
	for i := 0; i < len(s); i++ {
		if !a.first[s[i]] {
			continue
		}
		for k := range a.list {
			if strings.HasPrefix(s[i:], a.list[k].content) {
				return i, &a.list[k]
			}
		}
	}
	return len(s), nil
}

// pairKey packs two ids into one map key.
func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func (t *bpeTokenizer) Name() string { return t.name }

func (t *bpeTokenizer) Encode(s string) []int {
	ids := make([]int, 0, len(s)/3+1)
	t.encode(s, func(id int32) { ids = append(ids, int(id)) })
	return ids
}

func (t *bpeTokenizer) Count(s string) int {
	n := 0
	t.encode(s, func(int32) { n++ })
	return n
}

func (t *bpeTokenizer) Decode(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		if id >= 0 && id < len(t.tokens) {
			b.WriteString(t.tokens[id])
		}
	}
	return b.String()
}

// encode emits the ids of s in order.
func (t *bpeTokenizer) encode(s string, emit func(int32)) {
	for s != "" {
		at, tok := t.added.next(s)
		if at > 0 {
			t.encodeText(s[:at], emit)
		}
		if tok == nil {
			return
		}
		emit(tok.id)
		s = s[at+len(tok.content):]
	}
}

// encodeText runs steps 2 to 4 on text free of added tokens.
func (t *bpeTokenizer) encodeText(s string, emit func(int32)) {
	s = t.applyNFC(s)
	if t.addPrefixSpace && !strings.HasPrefix(s, " ") {
		s = " " + s
	}
	t.split(0, s, func(piece string) { t.encodePiece(piece, emit) })
}

// split applies split regex k and the ones after it to s, calling emit for
// every final piece. "Isolated" behaviour: matches and the gaps between
// them are both pieces, so no byte is ever dropped.
func (t *bpeTokenizer) split(k int, s string, emit func(string)) {
	if k == len(t.splits) {
		emit(s)
		return
	}
	// The patterns used in practice cannot time out (no timeout is set) and
	// always match valid input; on an error the text stays one piece rather
	// than being lost.
	spans, err := t.splits[k].FindAllStringIndex(s, -1)
	if err != nil {
		t.split(k+1, s, emit)
		return
	}
	last := 0
	for _, sp := range spans {
		if sp[0] > last {
			t.split(k+1, s[last:sp[0]], emit)
		}
		if sp[1] > sp[0] {
			t.split(k+1, s[sp[0]:sp[1]], emit)
		}
		last = sp[1]
	}
	if last < len(s) {
		t.split(k+1, s[last:], emit)
	}
}

// encodePiece emits the BPE ids of one pre-tokenized piece.
func (t *bpeTokenizer) encodePiece(p string, emit func(int32)) {
	if t.ignoreMerges {
		if id, ok := t.ids[p]; ok {
			emit(id)
			return
		}
	}
	ids, ok := t.cache.get(p)
	if !ok {
		ids = t.mergePiece(p)
		t.cache.put(p, ids)
	}
	for _, id := range ids {
		emit(id)
	}
}

// mergePiece runs BPE on one piece. It rescans the pairs after each merge,
// which is quadratic in the piece's length, but pieces are words, numbers
// of at most a few digits or short runs of punctuation, and the cache
// means each distinct piece is merged once.
func (t *bpeTokenizer) mergePiece(p string) []int32 {
	syms := make([]int32, len(p))
	for i := range len(p) {
		syms[i] = t.byteIDs[p[i]]
	}
	for len(syms) > 1 {
		best, bestRank, bestID := -1, int32(math.MaxInt32), int32(0)
		for i := 0; i+1 < len(syms); i++ {
			if m, ok := t.merges[pairKey(syms[i], syms[i+1])]; ok && m.rank < bestRank {
				best, bestRank, bestID = i, m.rank, m.id
			}
		}
		if best < 0 {
			break
		}
		syms[best] = bestID
		syms = append(syms[:best+1], syms[best+2:]...)
	}
	return syms
}

// pieceCacheLimit caps the piece cache. Prompts are built from a few
// hundred words and datasets repeat common words, so the hit rate is high
// long before the cap; the cap only bounds memory on a huge, varied
// dataset, after which new pieces are merged every time.
const pieceCacheLimit = 1 << 16

// pieceCache remembers the BPE result of pieces the merges split.
type pieceCache struct {
	mu sync.RWMutex
	m  map[string][]int32
}

// newPieceCache returns an empty cache.
func newPieceCache() *pieceCache { return &pieceCache{m: make(map[string][]int32)} }

// get returns the cached ids of piece p.
func (c *pieceCache) get(p string) ([]int32, bool) {
	c.mu.RLock()
	ids, ok := c.m[p]
	c.mu.RUnlock()
	return ids, ok
}

// put caches the ids of p unless the cache is full. p is cloned because it
// may be a slice of a large text the caller is done with.
func (c *pieceCache) put(p string, ids []int32) {
	c.mu.Lock()
	if len(c.m) < pieceCacheLimit {
		c.m[strings.Clone(p)] = ids
	}
	c.mu.Unlock()
}
