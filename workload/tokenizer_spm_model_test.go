package workload

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// spmProtoPiece writes one ModelProto.SentencePiece.
func spmProtoPiece(text string, score float32, kind spmPieceType) []byte {
	var p []byte
	p = protowire.AppendTag(p, 1, protowire.BytesType)
	p = protowire.AppendString(p, text)
	p = protowire.AppendTag(p, 2, protowire.Fixed32Type)
	p = protowire.AppendFixed32(p, math.Float32bits(score))
	p = protowire.AppendTag(p, 3, protowire.VarintType)
	p = protowire.AppendVarint(p, uint64(kind))
	return p
}

// spmProto writes a ModelProto: the pieces, then a TrainerSpec with the
// model type and byte_fallback, then a NormalizerSpec with name identity,
// add_dummy_prefix true and remove_extra_whitespaces false (Llama 2's),
// then any extra bytes.
func spmProto(pieces [][]byte, modelType uint64, byteFallback bool, extra ...byte) []byte {
	var b []byte
	for _, p := range pieces {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, p)
	}
	var ts []byte
	ts = protowire.AppendTag(ts, 3, protowire.VarintType)
	ts = protowire.AppendVarint(ts, modelType)
	ts = protowire.AppendTag(ts, 35, protowire.VarintType)
	ts = protowire.AppendVarint(ts, protowire.EncodeBool(byteFallback))
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, ts)
	var ns []byte
	ns = protowire.AppendTag(ns, 1, protowire.BytesType)
	ns = protowire.AppendString(ns, "identity")
	ns = protowire.AppendTag(ns, 4, protowire.VarintType)
	ns = protowire.AppendVarint(ns, 0)
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendBytes(b, ns)
	return append(b, extra...)
}

// handPieces is a hand-made BPE vocabulary: <unk>, then ▁ a b ▁a ab ▁ab
// with scores falling by one, so ▁+a (score -3) merges before a+b (-4).
func handPieces() [][]byte {
	return [][]byte{
		spmProtoPiece("<unk>", 0, spmUnknown),
		spmProtoPiece("▁", 0, spmNormal),    // 1
		spmProtoPiece("a", -1, spmNormal),   // 2
		spmProtoPiece("b", -2, spmNormal),   // 3
		spmProtoPiece("▁a", -3, spmNormal),  // 4
		spmProtoPiece("ab", -4, spmNormal),  // 5
		spmProtoPiece("▁ab", -5, spmNormal), // 6
	}
}

func TestSPMHandModelKnownIDs(t *testing.T) {
	t.Parallel()
	tok, err := parseSPMTokenizer(spmProto(handPieces(), spmModelBPE, false), "hand.model")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want []int
	}{
		// ▁ a b: ▁a (score -3) beats ab (-4), then ▁a+b is ▁ab.
		{"ab", []int{6}},
		// ▁ b a: no ▁b piece; b+a is no piece; nothing merges.
		{"ba", []int{1, 3, 2}},
		// The space becomes ▁ and starts its own word.
		{"a ab", []int{4, 6}},
		// c is unknown; without byte fallback two of them are one <unk>.
		{"acc", []int{4, 0}},
	}
	for _, tt := range tests {
		if got := tok.Encode(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestSPMModelErrors(t *testing.T) {
	t.Parallel()
	good := handPieces()
	with := func(extra ...[]byte) [][]byte { return append(slices.Clone(good), extra...) }
	// A second NormalizerSpec, merged into the first as protobuf does,
	// holding a precompiled_charsmap.
	spec := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), []byte{1, 2, 3})
	charsMap := protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), spec)
	tests := []struct {
		name string
		data []byte
		want string // substring of the error
	}{
		// An empty file has no pieces.
		{"empty", nil, "no pieces"},
		// Cut in the middle of a piece.
		{"truncated", spmProto(good, spmModelBPE, false)[:20], "not a SentencePiece model"},
		// A JSON file is not protobuf.
		{"json", []byte(`{"model": {}}`), "not a SentencePiece model"},
		// A piece field with the wrong wire type.
		{"wiretype", protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 7), "pieces: wire type 0"},
		// WORD models (3) are refused by number.
		{"word", spmProto(good, 3, false), "model_type 3"},
		// A precompiled normalization map (nmt_nfkc) is refused.
		{"charsmap", spmProto(good, spmModelBPE, false, charsMap...), "precompiled normalization map"},
		// No unknown piece.
		{"nounk", spmProto(good[1:], spmModelBPE, false), "no unknown piece"},
		// A piece twice.
		{"duplicate", spmProto(with(spmProtoPiece("ab", -9, spmNormal)), spmModelBPE, false), `"ab": defined twice`},
		// Byte fallback without all 256 byte pieces.
		{"nobytes", spmProto(with(spmProtoPiece("<0x41>", 0, spmByte)), spmModelBPE, true), "no piece <0x00>"},
		// A byte piece that names no byte.
		{"badbyte", spmProto(with(spmProtoPiece("<0xZZ>", 0, spmByte)), spmModelBPE, true), `"<0xZZ>": a byte piece`},
		// A piece type outside the enum.
		{"badtype", spmProto(with(spmProtoPiece("c", 0, 9)), spmModelBPE, false), "type 9"},
		// A score that is not a number would break every comparison.
		{"nan", spmProto(with(spmProtoPiece("c", float32(math.NaN()), spmNormal)), spmModelBPE, false), "score NaN"},
	}
	for _, tt := range tests {
		_, err := parseSPMTokenizer(tt.data, tt.name+".model")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error = %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

// FuzzSentencePieceModel feeds the parser arbitrary bytes: it must never
// panic, and a model it accepts must encode text into ids it can decode,
// with Count agreeing with Encode.
func FuzzSentencePieceModel(f *testing.F) {
	for _, name := range []string{"bpe-bytefallback", "bpe-unk", "unigram"} {
		data, err := os.ReadFile(filepath.Join("testdata", "tokenizer", "spm", name+".model"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "Hello  world\n 😀 tool<tab>")
	}
	f.Add(spmProto(handPieces(), spmModelBPE, false), "ab ba acc")
	f.Add(spmProto(handPieces(), spmModelUnigram, false), "ab ba acc")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		tok, err := parseSPMTokenizer(data, "fuzz.model")
		if err != nil {
			return
		}
		ids := tok.Encode(text)
		if n := tok.Count(text); n != len(ids) {
			t.Fatalf("Count = %d, len(Encode) = %d", n, len(ids))
		}
		for _, id := range ids {
			if id < 0 || id >= len(tok.tokens) {
				t.Fatalf("id %d out of range [0, %d)", id, len(tok.tokens))
			}
		}
		_ = tok.Decode(ids)
	})
}
