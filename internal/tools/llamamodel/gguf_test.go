package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// TestGGUFLayout: a written file reads back as GGUF v3 with its keys and
// values, each tensor at an aligned offset, and the data section sized
// to the tensors.
func TestGGUFLayout(t *testing.T) {
	t.Parallel()
	s := shape{layers: 1, embd: 8, heads: 2, kvHeads: 1, ff: 16, context: 64}
	if err := s.validate(); err != nil {
		t.Fatal(err)
	}
	v := &vocab{tokens: []string{"a", "b", "ab", "<s>"}, types: []int32{1, 1, 1, 3}, merges: []string{"a b"}, template: "{{x}}"}
	kvs := append(s.metadata("t"), v.metadata()...)
	ts := s.tensors(len(v.tokens), 1)
	var buf bytes.Buffer
	if err := writeGGUF(&buf, kvs, ts); err != nil {
		t.Fatal(err)
	}
	r := &reader{b: buf.Bytes()}
	if r.u32() != ggufMagic || r.u32() != ggufVersion || r.u64() != uint64(len(ts)) || r.u64() != uint64(len(kvs)) {
		t.Fatal("header is not GGUF v3 with the counts written")
	}
	got := map[string]any{}
	for range kvs {
		key := r.str()
		got[key] = r.value()
	}
	for key, want := range map[string]any{"general.architecture": "llama", "llama.block_count": uint32(1),
		"llama.attention.head_count_kv": uint32(1), "llama.rope.freq_base": float32(500000), "tokenizer.ggml.pre": "llama-bpe",
		"tokenizer.ggml.add_bos_token": true, "tokenizer.chat_template": "{{x}}", "tokenizer.ggml.tokens": 4, "tokenizer.ggml.token_type": 4} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
	var end uint64
	for i, want := range ts {
		name, dims := r.str(), make([]uint64, r.u32())
		for d := range dims {
			dims[d] = r.u64()
		}
		typ, off := r.u32(), r.u64()
		if name != want.name || typ != want.typ || off%ggufAlignment != 0 || off < end {
			t.Errorf("tensor %d: %s type %d at %d, want %s type %d, aligned, past %d", i, name, typ, off, want.name, want.typ, end)
		}
		end = off + want.size()
	}
	data := aligned(uint64(r.at))
	if uint64(len(buf.Bytes())) != data+aligned(end) {
		t.Errorf("file is %d bytes, want the data section at %d plus %d", len(buf.Bytes()), data, aligned(end))
	}
}

// TestF16: half-precision conversion of the values random weights take.
func TestF16(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {0, 0}, {1e-9, 0}, {70000, 0x7bff}, {0.0200043, 0x251f},
	} {
		if got := f16(tt.in); got != tt.want {
			t.Errorf("f16(%g) = %#04x, want %#04x", tt.in, got, tt.want)
		}
	}
}

// reader reads what writeGGUF writes, for the test.
type reader struct {
	b  []byte
	at int
}

func (r *reader) u32() uint32 { v := binary.LittleEndian.Uint32(r.b[r.at:]); r.at += 4; return v }
func (r *reader) u64() uint64 { v := binary.LittleEndian.Uint64(r.b[r.at:]); r.at += 8; return v }
func (r *reader) str() string {
	n := int(r.u64())
	s := string(r.b[r.at : r.at+n])
	r.at += n
	return s
}

// value reads one typed value; an array reads as its length.
func (r *reader) value() any {
	switch typ := r.u32(); typ {
	case typeUint32:
		return r.u32()
	case typeInt32:
		return int32(r.u32())
	case typeFloat32:
		return math.Float32frombits(r.u32())
	case typeBool:
		r.at++
		return r.b[r.at-1] == 1
	case typeString:
		return r.str()
	case typeArray:
		elem, n := r.u32(), int(r.u64())
		for range n {
			if elem == typeString {
				r.str()
			} else {
				r.u32()
			}
		}
		return n
	}
	return nil
}
