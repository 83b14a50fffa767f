package workload

import (
	"errors"
	"fmt"
	"maps"
	"strings"
)

// isSentencePieceStyle reports whether a tokenizer.json marks spaces with
// "▁" the SentencePiece way (Llama 2, Mistral) rather than being byte-level.
func isSentencePieceStyle(f *hfFile) bool {
	if f.Model.ByteFallback {
		return true
	}
	if p := f.PreTokenizer; p != nil && p.Type == "Metaspace" {
		return true
	}
	n := f.Normalizer
	if n == nil {
		return false
	}
	for _, inner := range append([]hfNormalizer{*n}, n.Normalizers...) {
		if inner.Type == "Prepend" || (inner.Type == "Replace" && inner.Content == spaceMark) {
			return true
		}
	}
	return false
}

// hfSentencePieceBPE segments words by a tokenizer.json's ranked merges,
// as Hugging Face's BPE model does with byte_fallback: a character that
// is no token becomes its byte tokens ("<0xE2>"…) before merging, or the
// unknown token.
type hfSentencePieceBPE struct {
	ids          map[string]int32
	merges       map[uint64]bpeMerge
	ignoreMerges bool
	byteFallback bool
	byteIDs      [256]int32
	unkID        int32 // -1: none
	fuseUnk      bool
}

// newHFSentencePiece checks a SentencePiece-style tokenizer.json and builds
// its tokenizer.
func newHFSentencePiece(f *hfFile) (*spmTokenizer, error) {
	if f.Model.Type != "BPE" {
		return nil, fmt.Errorf("model.type %q: only BPE is supported", f.Model.Type)
	}
	t := &spmTokenizer{cache: newPieceCache()}
	escaped, err := t.setSpaceMarking(f)
	if err != nil {
		return nil, err
	}
	if !escaped {
		return nil, errors.New("normalizer, pre_tokenizer: spaces are not replaced by \"▁\" (want a Replace normalizer or a Metaspace pre-tokenizer)")
	}
	m, err := newHFSentencePieceBPE(&f.Model)
	if err != nil {
		return nil, err
	}
	t.segment = m.segment
	t.splitWords = wordsSplittable(maps.Keys(m.ids))
	t.tokens = hfSentencePieceDecodeTable(m.ids, m.byteFallback)
	t.tokens = t.added.set(f.AddedTokens, t.tokens)
	return t, nil
}

// setSpaceMarking reads how the file marks spaces: Prepend and Replace
// normalizers (Llama 2's file) or a Metaspace pre-tokenizer (newer
// conversions). escaped reports that spaces become "▁".
func (t *spmTokenizer) setSpaceMarking(f *hfFile) (escaped bool, err error) {
	if n := f.Normalizer; n != nil {
		steps := []hfNormalizer{*n}
		if n.Type == "Sequence" {
			steps = n.Normalizers
		}
		for i, s := range steps {
			switch {
			case s.Type == "Prepend" && s.Prepend == spaceMark:
				t.norm.prepend = prependAlways
			case s.Type == "Replace" && s.Pattern.String != nil && *s.Pattern.String == " " && s.Content == spaceMark:
				t.norm.escapeSpaces, escaped = true, true
			default:
				return false, fmt.Errorf("normalizer step %d: type %q is not supported here (want Prepend \"▁\" or Replace \" \" by \"▁\")", i, s.Type)
			}
		}
	}
	p := f.PreTokenizer
	if p == nil {
		return escaped, nil
	}
	if p.Type != "Metaspace" {
		return false, fmt.Errorf("pre_tokenizer: type %q is not supported with a SentencePiece-style model (want Metaspace or none)", p.Type)
	}
	if p.Replacement != spaceMark {
		return false, fmt.Errorf("pre_tokenizer Metaspace: replacement %q, only \"▁\" is supported", p.Replacement)
	}
	switch p.PrependScheme {
	case "always":
		t.norm.prepend = prependUnlessSpace
	case "first":
		t.norm.prepend = prependFirstUnlessSpace
	case "never":
	case "":
		// Files older than prepend_scheme say add_prefix_space.
		if p.AddPrefixSpace {
			t.norm.prepend = prependUnlessSpace
		}
	default:
		return false, fmt.Errorf("pre_tokenizer Metaspace: prepend_scheme %q is not always, first or never", p.PrependScheme)
	}
	t.norm.escapeSpaces = true
	t.metaspaceSplit = p.Split == nil || *p.Split
	return true, nil
}

// newHFSentencePieceBPE reads the vocabulary and merges.
func newHFSentencePieceBPE(mf *hfModel) (*hfSentencePieceBPE, error) {
	if len(mf.Vocab) == 0 {
		return nil, errors.New("model.vocab: empty")
	}
	m := &hfSentencePieceBPE{ids: make(map[string]int32, len(mf.Vocab)), ignoreMerges: mf.IgnoreMerges, byteFallback: mf.ByteFallback, unkID: -1, fuseUnk: mf.FuseUnk}
	for tok, id := range mf.Vocab {
		if id < 0 || id >= 1<<30 {
			return nil, fmt.Errorf("model.vocab %q: id %d out of range", tok, id)
		}
		m.ids[tok] = int32(id)
	}
	if mf.UnkToken != nil {
		id, ok := m.ids[*mf.UnkToken]
		if !ok {
			return nil, fmt.Errorf("model.unk_token %q: not in the vocabulary", *mf.UnkToken)
		}
		m.unkID = id
	}
	if m.byteFallback {
		for b := range 256 {
			id, ok := m.ids[fmt.Sprintf("<0x%02X>", b)]
			if !ok {
				return nil, fmt.Errorf("model.byte_fallback: no token <0x%02X>; byte fallback needs all 256", b)
			}
			m.byteIDs[b] = id
		}
	}
	if len(mf.Merges) > 1<<24 {
		// Ranks become float32 priorities, exact up to 2^24.
		return nil, fmt.Errorf("model.merges: %d merges, more than 2^24", len(mf.Merges))
	}
	m.merges = make(map[uint64]bpeMerge, len(mf.Merges))
	for rank, raw := range mf.Merges {
		a, b, err := parseMerge(raw)
		if err != nil {
			return nil, fmt.Errorf("model.merges[%d]: %w", rank, err)
		}
		ia, okA := m.ids[a]
		ib, okB := m.ids[b]
		id, okM := m.ids[a+b]
		if !okA || !okB || !okM {
			return nil, fmt.Errorf("model.merges[%d] %q + %q: a part or the merged token is not in the vocabulary", rank, a, b)
		}
		if _, dup := m.merges[pairKey(ia, ib)]; !dup {
			m.merges[pairKey(ia, ib)] = bpeMerge{rank: int32(rank), id: id}
		}
	}
	return m, nil
}

// segment returns the ids of one normalized word.
func (m *hfSentencePieceBPE) segment(w string) []int32 {
	if m.ignoreMerges {
		if id, ok := m.ids[w]; ok {
			return []int32{id}
		}
	}
	syms := make([]mergeSymbol, 0, len(w))
	add := func(start, end int, id int32) {
		k := int32(len(syms))
		syms = append(syms, mergeSymbol{start: int32(start), end: int32(end), prev: k - 1, next: k + 1, id: id})
	}
	for i := 0; i < len(w); {
		n := charLen(w[i:])
		id, ok := m.ids[w[i:i+n]]
		switch {
		case ok:
			add(i, i+n, id)
		case m.byteFallback:
			for j := i; j < i+n; j++ {
				add(j, j+1, m.byteIDs[w[j]])
			}
		case m.unkID < 0:
			// No unknown token: the character is dropped, as Hugging
			// Face does.
		case m.fuseUnk && len(syms) > 0 && syms[len(syms)-1].id == m.unkID && syms[len(syms)-1].end == int32(i):
			syms[len(syms)-1].end = int32(i + n)
		default:
			add(i, i+n, m.unkID)
		}
		i += n
	}
	if len(syms) == 0 {
		return nil
	}
	syms[len(syms)-1].next = -1
	out := mergeSymbols(w, syms, m.mergeRule, nil)
	ids := make([]int32, len(out))
	for i, s := range out {
		ids[i] = s.id
	}
	return ids
}

// mergeRule merges by rank: the earlier a merge is listed, the sooner it
// applies.
func (m *hfSentencePieceBPE) mergeRule(_ string, l, r *mergeSymbol) (float32, int32, bool) {
	mg, ok := m.merges[pairKey(l.id, r.id)]
	if !ok {
		return 0, 0, false
	}
	return -float32(mg.rank), mg.id, true
}

// hfSentencePieceDecodeTable gives each token the text it decodes to: "▁"
// as a space, and a byte token as its byte.
func hfSentencePieceDecodeTable(ids map[string]int32, byteFallback bool) []string {
	maxID := int32(0)
	for _, id := range ids {
		maxID = max(maxID, id)
	}
	tokens := make([]string, maxID+1)
	for tok, id := range ids {
		if b, ok := parseBytePiece(tok); ok && byteFallback {
			tokens[id] = string([]byte{b})
			continue
		}
		tokens[id] = strings.ReplaceAll(tok, spaceMark, " ")
	}
	return tokens
}
