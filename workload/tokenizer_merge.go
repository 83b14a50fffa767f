package workload

// mergeSymbol is one symbol of a word during BPE: the span word[start:end]
// it covers, the token id it is (-1 when it is no token), and its live
// neighbours. A frozen symbol (a SentencePiece user-defined piece) never
// merges.
type mergeSymbol struct {
	start, end int32
	prev, next int32
	id         int32
	frozen     bool
}

// mergeRule says what two adjacent symbols merge into: the merged token's
// id and its priority (higher merges first), or ok false when they do not
// merge.
type mergeRule func(word string, l, r *mergeSymbol) (score float32, id int32, ok bool)

// mergeCandidate is a pair of adjacent symbols that may merge. size is the
// merged span's length when the pair was found: if either side has changed
// since, the lengths no longer add up and the candidate is stale.
type mergeCandidate struct {
	left, right int32
	size        int32
	score       float32
	id          int32
}

// before orders candidates: the best score first and, among equals, the
// leftmost. Both SentencePiece (score, then left) and Hugging Face (rank,
// then position) break ties this way.
func (c mergeCandidate) before(o mergeCandidate) bool {
	return c.score > o.score || (c.score == o.score && c.left < o.left)
}

// mergeSymbols runs BPE on syms, the initial symbols of word in order
// with their links set, and returns the surviving symbols in order. It
// keeps candidates in a heap, as SentencePiece does, so a long word (a
// sentence without spaces) costs O(n log n) rather than a rescan per
// merge. merged, when not nil, sees each merge's two parts and the id they become.
func mergeSymbols(word string, syms []mergeSymbol, rule mergeRule, merged func(l, r *mergeSymbol, id int32)) []mergeSymbol {
	if len(syms) < 2 {
		return syms
	}
	h := make(mergeHeap, 0, len(syms))
	for i := 1; i < len(syms); i++ {
		h.maybePush(word, syms, int32(i-1), int32(i), rule)
	}
	for len(h) > 0 {
		c := h.pop()
		l, r := &syms[c.left], &syms[c.right]
		if l.end == l.start || r.end == r.start || (l.end-l.start)+(r.end-r.start) != c.size {
			continue
		}
		if merged != nil {
			merged(l, r, c.id)
		}
		l.end, l.id = r.end, c.id
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = c.left
		}
		r.start, r.end = 0, 0
		h.maybePush(word, syms, l.prev, c.left, rule)
		h.maybePush(word, syms, c.left, l.next, rule)
	}
	out := syms[:0]
	for i := int32(0); i >= 0; {
		s := syms[i]
		out = append(out, s)
		i = s.next
	}
	return out
}

// mergeHeap is a binary heap of candidates, best first. It is written out
// rather than using container/heap, which would allocate per push.
type mergeHeap []mergeCandidate

// maybePush adds the pair (l, r) if the rule merges it.
func (h *mergeHeap) maybePush(word string, syms []mergeSymbol, l, r int32, rule mergeRule) {
	if l < 0 || r < 0 || syms[l].frozen || syms[r].frozen {
		return
	}
	score, id, ok := rule(word, &syms[l], &syms[r])
	if !ok {
		return
	}
	size := (syms[l].end - syms[l].start) + (syms[r].end - syms[r].start)
	*h = append(*h, mergeCandidate{left: l, right: r, size: size, score: score, id: id})
	for i := len(*h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !(*h)[i].before((*h)[parent]) {
			break
		}
		(*h)[i], (*h)[parent] = (*h)[parent], (*h)[i]
		i = parent
	}
}

// pop removes and returns the best candidate.
func (h *mergeHeap) pop() mergeCandidate {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	for i := 0; ; {
		best, l, r := i, 2*i+1, 2*i+2
		if l < last && old[l].before(old[best]) {
			best = l
		}
		if r < last && old[r].before(old[best]) {
			best = r
		}
		if best == i {
			break
		}
		old[i], old[best] = old[best], old[i]
		i = best
	}
	return top
}
