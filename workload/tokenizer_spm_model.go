package workload

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	"github.com/inferload/inferload/internal/inputfile"
	"google.golang.org/protobuf/encoding/protowire"
)

// spmPieceType is a SentencePiece piece's type (ModelProto.SentencePiece.Type).
type spmPieceType uint8

// The piece types of sentencepiece_model.proto, with its numbers.
const (
	spmNormal      spmPieceType = 1
	spmUnknown     spmPieceType = 2
	spmControl     spmPieceType = 3
	spmUserDefined spmPieceType = 4
	spmUnused      spmPieceType = 5
	spmByte        spmPieceType = 6
)

// The model types of sentencepiece_model.proto (TrainerSpec.ModelType).
const (
	spmModelUnigram = 1
	spmModelBPE     = 2
)

// spmModelProto is the part of a SentencePiece ModelProto that encoding
// needs, with the proto's defaults for fields the file leaves out.
type spmModelProto struct {
	pieces []spmModelPiece
	// From TrainerSpec.
	modelType          uint64
	byteFallback       bool
	whitespaceAsSuffix bool
	// From NormalizerSpec.
	normName          string
	charsMap          bool // a precompiled normalization map is present
	addDummyPrefix    bool
	removeExtraSpaces bool
	escapeSpaces      bool
}

// spmModelPiece is one vocabulary entry; its id is its index.
type spmModelPiece struct {
	text  string
	score float32
	kind  spmPieceType
}

// loadSPMTokenizer reads a SentencePiece tokenizer.model at path, bounded
// by inputfile.SentencePiece's limit, stopping when ctx is done.
func loadSPMTokenizer(ctx context.Context, path string) (Tokenizer, error) {
	data, err := inputfile.Read(ctx, path, inputfile.SentencePiece)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return parseSPMTokenizer(data, path)
}

// parseSPMTokenizer builds the tokenizer of a tokenizer.model's bytes;
// name is used in errors and returned by Name.
func parseSPMTokenizer(data []byte, name string) (*spmTokenizer, error) {
	m, err := parseSPMModelProto(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: not a SentencePiece model: %w", name, err)
	}
	t, err := newSPMModelTokenizer(m)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	t.name = name
	return t, nil
}

// parseSPMModelProto decodes the protobuf, skipping fields it does not use.
func parseSPMModelProto(data []byte) (*spmModelProto, error) {
	m := &spmModelProto{modelType: spmModelUnigram, addDummyPrefix: true, removeExtraSpaces: true, escapeSpaces: true}
	err := walkProto(data, func(f protoField) error {
		switch f.num {
		case 1:
			if err := f.want(protowire.BytesType, "pieces"); err != nil {
				return err
			}
			p, err := parseSPMPiece(f.bytes)
			if err != nil {
				return fmt.Errorf("pieces[%d]: %w", len(m.pieces), err)
			}
			m.pieces = append(m.pieces, p)
		case 2:
			if err := f.want(protowire.BytesType, "trainer_spec"); err != nil {
				return err
			}
			return m.parseTrainerSpec(f.bytes)
		case 3:
			if err := f.want(protowire.BytesType, "normalizer_spec"); err != nil {
				return err
			}
			return m.parseNormalizerSpec(f.bytes)
		}
		return nil
	})
	return m, err
}

// parseSPMPiece decodes one ModelProto.SentencePiece.
func parseSPMPiece(b []byte) (spmModelPiece, error) {
	p := spmModelPiece{kind: spmNormal}
	err := walkProto(b, func(f protoField) error {
		switch f.num {
		case 1:
			if err := f.want(protowire.BytesType, "piece"); err != nil {
				return err
			}
			p.text = string(f.bytes)
		case 2:
			if err := f.want(protowire.Fixed32Type, "score"); err != nil {
				return err
			}
			p.score = math.Float32frombits(f.fixed32)
		case 3:
			if err := f.want(protowire.VarintType, "type"); err != nil {
				return err
			}
			if f.varint < uint64(spmNormal) || f.varint > uint64(spmByte) {
				return fmt.Errorf("type %d: not a SentencePiece piece type", f.varint)
			}
			p.kind = spmPieceType(f.varint)
		}
		return nil
	})
	return p, err
}

// parseTrainerSpec reads the TrainerSpec fields that change encoding.
func (m *spmModelProto) parseTrainerSpec(b []byte) error {
	return walkProto(b, func(f protoField) error {
		var dst *bool
		switch f.num {
		case 3:
			if err := f.want(protowire.VarintType, "trainer_spec.model_type"); err != nil {
				return err
			}
			m.modelType = f.varint
			return nil
		case 24:
			dst = &m.whitespaceAsSuffix
		case 35:
			dst = &m.byteFallback
		default:
			return nil
		}
		if err := f.want(protowire.VarintType, fmt.Sprintf("trainer_spec field %d", f.num)); err != nil {
			return err
		}
		*dst = f.varint != 0
		return nil
	})
}

// parseNormalizerSpec reads the NormalizerSpec.
func (m *spmModelProto) parseNormalizerSpec(b []byte) error {
	return walkProto(b, func(f protoField) error {
		var dst *bool
		switch f.num {
		case 1, 2:
			if err := f.want(protowire.BytesType, fmt.Sprintf("normalizer_spec field %d", f.num)); err != nil {
				return err
			}
			if f.num == 1 {
				m.normName = string(f.bytes)
			} else {
				m.charsMap = len(f.bytes) > 0
			}
			return nil
		case 3:
			dst = &m.addDummyPrefix
		case 4:
			dst = &m.removeExtraSpaces
		case 5:
			dst = &m.escapeSpaces
		default:
			return nil
		}
		if err := f.want(protowire.VarintType, fmt.Sprintf("normalizer_spec field %d", f.num)); err != nil {
			return err
		}
		*dst = f.varint != 0
		return nil
	})
}

// newSPMModelTokenizer checks a parsed model and builds its tokenizer.
// What it refuses, it refuses by name, because tokenizing differently
// from the server would defeat the purpose.
func newSPMModelTokenizer(m *spmModelProto) (*spmTokenizer, error) {
	switch {
	case len(m.pieces) == 0:
		return nil, errors.New("no pieces")
	case len(m.pieces) >= 1<<30:
		return nil, fmt.Errorf("%d pieces: too many", len(m.pieces))
	case m.modelType != spmModelUnigram && m.modelType != spmModelBPE:
		return nil, fmt.Errorf("trainer_spec.model_type %d: only BPE (2) and Unigram (1) are supported", m.modelType)
	case m.charsMap:
		return nil, fmt.Errorf("normalizer_spec %q: a precompiled normalization map (nmt_nfkc, the training default) is not supported, only identity normalization (Llama 2, Mistral)", m.normName)
	case m.whitespaceAsSuffix:
		return nil, errors.New("trainer_spec.treat_whitespace_as_suffix: not supported")
	}
	v, err := newSPMVocab(m)
	if err != nil {
		return nil, err
	}
	t := &spmTokenizer{
		norm:       spmNormalizer{removeExtraSpaces: m.removeExtraSpaces, escapeSpaces: m.escapeSpaces},
		splitWords: m.escapeSpaces && wordsSplittable(maps.Keys(v.ids)),
		tokens:     spmDecodeTable(m.pieces),
		cache:      newPieceCache(),
	}
	if m.addDummyPrefix {
		t.norm.prepend = prependAlways
	}
	if m.modelType == spmModelBPE {
		b := &spmBPE{spmVocab: *v}
		for _, p := range m.pieces {
			b.hasUnused = b.hasUnused || p.kind == spmUnused
		}
		t.segment = b.segment
		return t, nil
	}
	u := newSPMUnigram(v, m.pieces)
	t.segment = u.segment
	// A Viterbi split is not exact word by word: its float sums carry the
	// score of the text before each word.
	t.splitWords = false
	return t, nil
}

// newSPMVocab indexes the pieces and checks the special ones.
func newSPMVocab(m *spmModelProto) (*spmVocab, error) {
	v := &spmVocab{ids: make(map[string]int32, len(m.pieces)), scores: make([]float32, len(m.pieces)), kinds: make([]spmPieceType, len(m.pieces))}
	v.fallback = byteFallback{enabled: m.byteFallback, unkID: -1}
	seen := make(map[string]bool, len(m.pieces))
	var bytesSeen [256]bool
	for i, p := range m.pieces {
		id := int32(i)
		if p.text == "" {
			return nil, fmt.Errorf("pieces[%d]: empty", i)
		}
		if seen[p.text] {
			return nil, fmt.Errorf("pieces[%d] %q: defined twice", i, p.text)
		}
		seen[p.text] = true
		if math.IsNaN(float64(p.score)) || math.IsInf(float64(p.score), 0) {
			return nil, fmt.Errorf("pieces[%d] %q: score %v", i, p.text, p.score)
		}
		v.scores[i], v.kinds[i] = p.score, p.kind
		switch p.kind {
		case spmNormal, spmUnused:
			v.ids[p.text] = id
		case spmUserDefined:
			v.ids[p.text] = id
			v.userDefined = append(v.userDefined, p.text)
		case spmUnknown:
			if v.fallback.unkID >= 0 {
				return nil, fmt.Errorf("pieces[%d] %q: a second unknown piece", i, p.text)
			}
			v.fallback.unkID = id
		case spmByte:
			b, ok := parseBytePiece(p.text)
			if !ok {
				return nil, fmt.Errorf("pieces[%d] %q: a byte piece must be <0x00> to <0xFF>", i, p.text)
			}
			v.fallback.byteIDs[b], bytesSeen[b] = id, true
		}
	}
	if v.fallback.unkID < 0 {
		return nil, errors.New("no unknown piece (type UNKNOWN)")
	}
	if m.byteFallback {
		for b, ok := range bytesSeen {
			if !ok {
				return nil, fmt.Errorf("trainer_spec.byte_fallback: no piece <0x%02X>; byte fallback needs all 256", b)
			}
		}
	}
	v.sortUserDefined()
	return v, nil
}

// newSPMUnigram adds what Viterbi needs to the vocabulary.
func newSPMUnigram(v *spmVocab, pieces []spmModelPiece) *spmUnigram {
	u := &spmUnigram{spmVocab: *v, prefixes: make(map[string]struct{}), minScore: math.MaxFloat32, maxScore: fltMin}
	for _, p := range pieces {
		if p.kind == spmNormal {
			u.minScore = min(u.minScore, p.score)
			u.maxScore = max(u.maxScore, p.score)
		}
		if _, ok := v.ids[p.text]; ok {
			for i := 1; i < len(p.text); i++ {
				u.prefixes[p.text[:i]] = struct{}{}
			}
		}
	}
	return u
}

// parseBytePiece reads a byte piece's name, "<0x41>".
func parseBytePiece(s string) (byte, bool) {
	hex, ok := strings.CutPrefix(s, "<0x")
	if !ok || len(hex) != 3 || hex[2] != '>' {
		return 0, false
	}
	b, err := strconv.ParseUint(hex[:2], 16, 8)
	return byte(b), err == nil
}

// unknownSurface is what SentencePiece decodes the unknown piece to.
const unknownSurface = " \u2047 "

// spmDecodeTable gives each piece the text it decodes to.
func spmDecodeTable(pieces []spmModelPiece) []string {
	tokens := make([]string, len(pieces))
	for i, p := range pieces {
		switch p.kind {
		case spmNormal, spmUserDefined, spmUnused:
			tokens[i] = strings.ReplaceAll(p.text, spaceMark, " ")
		case spmByte:
			b, _ := parseBytePiece(p.text)
			tokens[i] = string([]byte{b})
		case spmUnknown:
			tokens[i] = unknownSurface
		}
	}
	return tokens
}

// protoField is one decoded protobuf field: its number, wire type and the
// value of that type.
type protoField struct {
	num     protowire.Number
	typ     protowire.Type
	varint  uint64
	fixed32 uint32
	bytes   []byte
}

// want checks the field's wire type; name says which field it is.
func (f protoField) want(typ protowire.Type, name string) error {
	if f.typ != typ {
		return fmt.Errorf("%s: wire type %d, want %d", name, f.typ, typ)
	}
	return nil
}

// walkProto calls fn on each field of the message b, in order.
func walkProto(b []byte, fn func(protoField) error) error {
	for off := 0; off < len(b); {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			return fmt.Errorf("byte %d: %w", off, protowire.ParseError(n))
		}
		f := protoField{num: num, typ: typ}
		val := b[off+n:]
		var m int
		switch typ {
		case protowire.VarintType:
			f.varint, m = protowire.ConsumeVarint(val)
		case protowire.Fixed32Type:
			f.fixed32, m = protowire.ConsumeFixed32(val)
		case protowire.BytesType:
			f.bytes, m = protowire.ConsumeBytes(val)
		default:
			m = protowire.ConsumeFieldValue(num, typ, val)
		}
		if m < 0 {
			return fmt.Errorf("byte %d, field %d: %w", off, num, protowire.ParseError(m))
		}
		if err := fn(f); err != nil {
			return err
		}
		off += n + m
	}
	return nil
}
