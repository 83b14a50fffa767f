package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// GGUF (version 3) as llama.cpp reads it: a header, typed key-value
// metadata, tensor descriptions, then the tensors' data, each at an offset
// aligned to ggufAlignment from the start of the data section.
const (
	ggufMagic     = 0x46554747 // "GGUF", little-endian
	ggufVersion   = 3
	ggufAlignment = 32
)

// Value types of GGUF metadata.
const (
	typeUint32  = 4
	typeInt32   = 5
	typeFloat32 = 6
	typeBool    = 7
	typeString  = 8
	typeArray   = 9
)

// Tensor element types.
const (
	tensorF32 = 0
	tensorF16 = 1
)

// kv is one metadata entry; value is a uint32, int32, float32, bool,
// string, []string or []int32.
type kv struct {
	key   string
	value any
}

// tensor is one tensor's description; dims are innermost first, as GGUF
// orders them (a matrix of r rows of c columns is {c, r}).
type tensor struct {
	name string
	dims []uint64
	typ  uint32
	fill func(w io.Writer) error // writes exactly size() bytes
}

func (t tensor) elements() uint64 {
	n := uint64(1)
	for _, d := range t.dims {
		n *= d
	}
	return n
}

func (t tensor) size() uint64 {
	if t.typ == tensorF16 {
		return 2 * t.elements()
	}
	return 4 * t.elements()
}

// writeGGUF writes a whole GGUF file.
func writeGGUF(out io.Writer, kvs []kv, tensors []tensor) error {
	w := &ggufWriter{w: bufio.NewWriterSize(out, 1<<20)}
	w.u32(ggufMagic)
	w.u32(ggufVersion)
	w.u64(uint64(len(tensors)))
	w.u64(uint64(len(kvs)))
	for _, e := range kvs {
		w.str(e.key)
		w.value(e.value)
	}
	var offset uint64
	for _, t := range tensors {
		w.str(t.name)
		w.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			w.u64(d)
		}
		w.u32(t.typ)
		w.u64(offset)
		offset = aligned(offset + t.size())
	}
	w.pad()
	for _, t := range tensors {
		if w.err == nil {
			w.err = t.fill(w)
		}
		w.pad()
	}
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

func aligned(n uint64) uint64 { return (n + ggufAlignment - 1) / ggufAlignment * ggufAlignment }

// ggufWriter writes little-endian fields, keeping the first error and the
// count of bytes written (for alignment).
type ggufWriter struct {
	w   *bufio.Writer
	n   uint64
	err error
}

func (g *ggufWriter) Write(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.w.Write(p)
	g.n += uint64(n)
	g.err = err
	return n, err
}

func (g *ggufWriter) u32(v uint32) { _, _ = g.Write(binary.LittleEndian.AppendUint32(nil, v)) }
func (g *ggufWriter) u64(v uint64) { _, _ = g.Write(binary.LittleEndian.AppendUint64(nil, v)) }

func (g *ggufWriter) str(s string) {
	g.u64(uint64(len(s)))
	_, _ = g.Write([]byte(s))
}

// pad writes zeros up to the next alignment boundary.
func (g *ggufWriter) pad() {
	if n := aligned(g.n) - g.n; n > 0 {
		_, _ = g.Write(make([]byte, n))
	}
}

func (g *ggufWriter) value(v any) {
	switch x := v.(type) {
	case uint32:
		g.u32(typeUint32)
		g.u32(x)
	case int32:
		g.u32(typeInt32)
		g.u32(uint32(x))
	case float32:
		g.u32(typeFloat32)
		g.u32(math.Float32bits(x))
	case bool:
		g.u32(typeBool)
		b := byte(0)
		if x {
			b = 1
		}
		_, _ = g.Write([]byte{b})
	case string:
		g.u32(typeString)
		g.str(x)
	case []string:
		g.u32(typeArray)
		g.u32(typeString)
		g.u64(uint64(len(x)))
		for _, s := range x {
			g.str(s)
		}
	case []int32:
		g.u32(typeArray)
		g.u32(typeInt32)
		g.u64(uint64(len(x)))
		for _, n := range x {
			g.u32(uint32(n))
		}
	default:
		if g.err == nil {
			g.err = fmt.Errorf("gguf: no type for %T", v)
		}
	}
}
