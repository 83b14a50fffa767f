package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// shape is a Llama model's size.
type shape struct {
	layers, embd, heads, kvHeads, ff, context int
}

func (s shape) validate() error {
	switch {
	case s.layers < 1 || s.embd < 1 || s.heads < 1 || s.ff < 1 || s.context < 1:
		return fmt.Errorf("shape %+v: every size must be at least 1", s)
	case s.embd%s.heads != 0:
		return fmt.Errorf("n_embd %d is not a multiple of %d heads", s.embd, s.heads)
	case s.kvHeads < 1 || s.heads%s.kvHeads != 0:
		return fmt.Errorf("%d key-value heads do not divide %d heads", s.kvHeads, s.heads)
	case (s.embd/s.heads)%2 != 0:
		return fmt.Errorf("head size %d is odd: rotary embeddings need an even one", s.embd/s.heads)
	}
	return nil
}

// metadata is the model's llama.* and general.* keys.
func (s shape) metadata(name string) []kv {
	return []kv{
		{"general.architecture", "llama"},
		{"general.name", name},
		{"general.file_type", uint32(1)}, // mostly F16
		{"llama.context_length", uint32(s.context)},
		{"llama.embedding_length", uint32(s.embd)},
		{"llama.block_count", uint32(s.layers)},
		{"llama.feed_forward_length", uint32(s.ff)},
		{"llama.attention.head_count", uint32(s.heads)},
		{"llama.attention.head_count_kv", uint32(s.kvHeads)},
		{"llama.rope.dimension_count", uint32(s.embd / s.heads)},
		{"llama.rope.freq_base", float32(500000)},
		{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
	}
}

// tensors are a Llama model's weights: random normal F16 matrices (σ
// 0.02, seeded, so the same flags write the same file) and F32 norms of
// ones. Random weights make random tokens: ask for exact lengths.
func (s shape) tensors(vocabSize int, seed uint64) []tensor {
	n := uint64(0)
	matrix := func(name string, cols, rows int) tensor {
		n++
		return tensor{name: name, dims: []uint64{uint64(cols), uint64(rows)}, typ: tensorF16, fill: randomF16(seed+n, uint64(cols*rows))}
	}
	norm := func(name string) tensor {
		return tensor{name: name, dims: []uint64{uint64(s.embd)}, typ: tensorF32, fill: onesF32(uint64(s.embd))}
	}
	kvDim := s.embd / s.heads * s.kvHeads
	ts := []tensor{matrix("token_embd.weight", s.embd, vocabSize), norm("output_norm.weight"), matrix("output.weight", s.embd, vocabSize)}
	for i := range s.layers {
		b := fmt.Sprintf("blk.%d.", i)
		ts = append(ts, norm(b+"attn_norm.weight"),
			matrix(b+"attn_q.weight", s.embd, s.embd), matrix(b+"attn_k.weight", s.embd, kvDim),
			matrix(b+"attn_v.weight", s.embd, kvDim), matrix(b+"attn_output.weight", s.embd, s.embd),
			norm(b+"ffn_norm.weight"), matrix(b+"ffn_gate.weight", s.embd, s.ff),
			matrix(b+"ffn_up.weight", s.embd, s.ff), matrix(b+"ffn_down.weight", s.ff, s.embd))
	}
	return ts
}

func randomF16(seed, n uint64) func(io.Writer) error {
	return func(w io.Writer) error {
		r := rand.New(rand.NewPCG(seed, 0x1f16))
		buf := make([]byte, 0, 1<<16)
		for range n {
			buf = binary.LittleEndian.AppendUint16(buf, f16(float32(r.NormFloat64()*0.02)))
			if len(buf) == cap(buf) {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		_, err := w.Write(buf)
		return err
	}
}

func onesF32(n uint64) func(io.Writer) error {
	return func(w io.Writer) error {
		buf := make([]byte, 0, 4*n)
		for range n {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(1))
		}
		_, err := w.Write(buf)
		return err
	}
}

// f16 is x as IEEE 754 half precision, rounded toward zero; values below
// the smallest normal half become 0 (no subnormals), which random weights
// of σ 0.02 never miss.
func f16(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	mant := uint16((b >> 13) & 0x3ff)
	switch {
	case exp <= 0:
		return sign
	case exp >= 31:
		return sign | 0x7bff // the largest finite half
	}
	return sign | uint16(exp)<<10 | mant
}
