package sim

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// checkAgainstMap replays ops on a prefixIndex and a Go map and fails at
// the first answer that differs. Each op is (kind, key): 0 put, 1 remove,
// 2 get; keys are drawn from a small space so that collisions, runs that
// wrap the table's end and deletes inside runs all happen.
func checkAgainstMap(t *testing.T, capacity int, ops [][2]uint64) {
	t.Helper()
	x, m := newPrefixIndex(capacity), map[uint64]int32{}
	for n, op := range ops {
		h := op[1]
		if h == 0 {
			continue
		}
		switch op[0] % 3 {
		case 0:
			if len(m) >= capacity {
				continue // the pool never holds more hashes than blocks
			}
			_, had := m[h]
			if got := x.put(h, int32(n)); got == had {
				t.Fatalf("op %d: put(%d) inserted=%v; the map already had it: %v", n, h, got, had)
			}
			if !had {
				m[h] = int32(n)
			}
		case 1:
			x.remove(h)
			delete(m, h)
		case 2:
			b, ok := x.get(h)
			want, wantOK := m[h]
			if ok != wantOK || b != want {
				t.Fatalf("op %d: get(%d) = %d,%v; want %d,%v", n, h, b, ok, want, wantOK)
			}
		}
	}
	for h, want := range m {
		if b, ok := x.get(h); !ok || b != want {
			t.Fatalf("at the end: get(%d) = %d,%v; want %d", h, b, ok, want)
		}
	}
}

func TestPrefixIndexMatchesAMap(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name          string
		capacity, ops int
		keySpace      uint64
	}{
		{"tiny table, dense keys", 4, 20000, 12},
		{"full table", 64, 100000, 80},
		{"large, sparse keys", 5000, 200000, 1 << 62},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tt.capacity)))
			ops := make([][2]uint64, tt.ops)
			for i := range ops {
				ops[i] = [2]uint64{r.Uint64N(3), 1 + r.Uint64N(tt.keySpace)}
			}
			checkAgainstMap(t, tt.capacity, ops)
		})
	}
}

// FuzzPrefixIndex: any sequence of puts, removes and gets answers as a Go
// map does.
func FuzzPrefixIndex(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 1, 1, 2, 2})
	f.Add([]byte{0, 5, 0, 13, 0, 21, 1, 5, 2, 13, 2, 21, 0, 5, 2, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		var ops [][2]uint64
		for len(data) >= 2 {
			ops = append(ops, [2]uint64{uint64(data[0]), uint64(data[1])})
			data = data[2:]
		}
		checkAgainstMap(t, 16, ops)
		// The same keys spread over the whole 64-bit range.
		for i := range ops {
			var b [8]byte
			b[0], b[7] = byte(ops[i][1]), byte(ops[i][1]>>4)
			ops[i][1] = binary.LittleEndian.Uint64(b[:])
		}
		checkAgainstMap(t, 16, ops)
	})
}
