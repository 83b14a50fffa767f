package sim

// blockPool is the simulated KV cache: a fixed number of blocks, each holding
// the keys and values of blockSize tokens. It follows vLLM V1's design so
// prefix caching behaves like the real thing:
//
//   - Every block not referenced by a running sequence sits in one free
//     queue, least recently freed first.
//   - A freed block keeps its prefix hash, so a later request with the same
//     prefix can take it back out of the queue (a cache hit) until an
//     allocation pops it from the head and evicts the hash.
//
// The queue is an intrusive doubly linked list over block indices, so
// allocation, freeing and hits are O(1) and allocate nothing.
type blockPool struct {
	ref    []int32  // references from running sequences
	hash   []uint64 // prefix hash held by the block; 0 means none
	prev   []int32  // free-queue links; -1 ends the list
	next   []int32
	inFree []bool

	head, tail int32
	numFree    int
	cached     *prefixIndex // prefix hash -> block holding it
}

// newBlockPool returns a pool of n free, empty blocks.
func newBlockPool(n int) *blockPool {
	p := &blockPool{
		ref:    make([]int32, n),
		hash:   make([]uint64, n),
		prev:   make([]int32, n),
		next:   make([]int32, n),
		inFree: make([]bool, n),
		head:   -1,
		tail:   -1,
		cached: newPrefixIndex(n),
	}
	for i := range n {
		p.pushTail(int32(i))
	}
	return p
}

// size is the number of blocks in the pool.
func (p *blockPool) size() int { return len(p.ref) }

// used is the number of blocks referenced by at least one sequence.
func (p *blockPool) used() int { return len(p.ref) - p.numFree }

// pushTail appends block b to the free queue.
func (p *blockPool) pushTail(b int32) {
	p.prev[b], p.next[b] = p.tail, -1
	if p.tail >= 0 {
		p.next[p.tail] = b
	} else {
		p.head = b
	}
	p.tail = b
	p.inFree[b] = true
	p.numFree++
}

// unlink removes block b from the free queue.
func (p *blockPool) unlink(b int32) {
	if p.prev[b] >= 0 {
		p.next[p.prev[b]] = p.next[b]
	} else {
		p.head = p.next[b]
	}
	if p.next[b] >= 0 {
		p.prev[p.next[b]] = p.prev[b]
	} else {
		p.tail = p.prev[b]
	}
	p.inFree[b] = false
	p.numFree--
}

// allocate takes n blocks from the head of the free queue, evicting any
// prefix hash they held, and appends them to dst. It takes nothing and
// reports false when fewer than n blocks are free.
func (p *blockPool) allocate(n int, dst []int32) ([]int32, bool) {
	if n > p.numFree {
		return dst, false
	}
	for range n {
		b := p.head
		p.unlink(b)
		if h := p.hash[b]; h != 0 {
			p.cached.remove(h)
			p.hash[b] = 0
		}
		p.ref[b] = 1
		dst = append(dst, b)
	}
	return dst, true
}

// release drops one reference from each block. Blocks are queued in reverse
// so that a sequence's tail blocks, the least likely to be shared, are
// evicted before its head blocks (vLLM does the same).
func (p *blockPool) release(blocks []int32) {
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		p.ref[b]--
		if p.ref[b] == 0 {
			p.pushTail(b)
		}
	}
}

// lookup returns the block holding prefix hash h, if any.
func (p *blockPool) lookup(h uint64) (int32, bool) {
	return p.cached.get(h)
}

// share takes a reference to a cached block, pulling it out of the free
// queue if nobody held it.
func (p *blockPool) share(b int32) {
	if p.inFree[b] {
		p.unlink(b)
	}
	p.ref[b]++
}

// register records that block b now holds the fully computed prefix with
// hash h. A prefix already held by another block keeps its first holder;
// the duplicate is simply not shareable, as in vLLM.
func (p *blockPool) register(b int32, h uint64) {
	if h == 0 || p.hash[b] != 0 {
		return
	}
	if p.cached.put(h, b) {
		p.hash[b] = h
	}
}
