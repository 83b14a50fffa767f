package sim

import "math/bits"

// prefixIndex maps prefix hashes to the blocks holding them. It replaces a
// Go map because the KV cache deletes as often as it inserts (every
// allocation evicts a hash), and a swiss-table map degrades under that
// churn: deleted slots stay as tombstones that lookups must probe past
// until the next rehash. This table uses linear probing with
// backward-shift deletion, which leaves no tombstones, so a lookup stays
// one or two probes however long the simulation runs.
//
// It never grows: a pool of n blocks holds at most n hashes, so the table
// is sized once at twice that (load factor at most 1/2).
type prefixIndex struct {
	slots []prefixSlot
	mask  uint64
	shift uint8
}

// prefixSlot keeps a key beside its value: one cache line per probe.
type prefixSlot struct {
	key   uint64 // 0 marks an empty slot (hash 0 means "no hash")
	block int32
}

// newPrefixIndex returns an index for up to n hashes.
func newPrefixIndex(n int) *prefixIndex {
	size := uint64(1) << bits.Len64(uint64(max(n, 4)*2-1))
	return &prefixIndex{slots: make([]prefixSlot, size), mask: size - 1,
		shift: uint8(64 - bits.TrailingZeros64(size))}
}

// home is key h's preferred slot. The hashes come from FNV, whose low
// bits are weak, so Fibonacci hashing takes the high bits of a product.
func (x *prefixIndex) home(h uint64) uint64 { return (h * 0x9E3779B97F4A7C15) >> x.shift }

// get returns the block holding h.
func (x *prefixIndex) get(h uint64) (int32, bool) {
	for i := x.home(h); ; i = (i + 1) & x.mask {
		switch x.slots[i].key {
		case h:
			return x.slots[i].block, true
		case 0:
			return 0, false
		}
	}
}

// put maps h (non-zero) to b unless h is already present; it reports
// whether it inserted.
func (x *prefixIndex) put(h uint64, b int32) bool {
	for i := x.home(h); ; i = (i + 1) & x.mask {
		switch x.slots[i].key {
		case h:
			return false
		case 0:
			x.slots[i] = prefixSlot{h, b}
			return true
		}
	}
}

// remove deletes h if present. Backward shift: each later entry of the
// probe run that could live in the freed slot moves back into it, so no
// run is ever broken by a hole.
func (x *prefixIndex) remove(h uint64) {
	i := x.home(h)
	for ; x.slots[i].key != h; i = (i + 1) & x.mask {
		if x.slots[i].key == 0 {
			return
		}
	}
	for j := (i + 1) & x.mask; x.slots[j].key != 0; j = (j + 1) & x.mask {
		// The entry at j may move to i when i lies on its probe path,
		// between its home and j (cyclically).
		if (j-x.home(x.slots[j].key))&x.mask >= (j-i)&x.mask {
			x.slots[i] = x.slots[j]
			i = j
		}
	}
	x.slots[i] = prefixSlot{}
}
