package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/dlclark/regexp2/v2"
	"github.com/inferload/inferload/internal/inputfile"
	"golang.org/x/text/unicode/norm"
)

// gpt2SplitPattern is the pre-tokenizer regex a ByteLevel pre-tokenizer
// applies when its use_regex is true (GPT-2, RoBERTa and their heirs).
const gpt2SplitPattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// hfFile is the part of a Hugging Face tokenizer.json that a byte-level BPE
// tokenizer needs. Fields for training, padding and truncation are ignored.
type hfFile struct {
	AddedTokens  []hfAddedToken  `json:"added_tokens"`
	Normalizer   *hfNormalizer   `json:"normalizer"`
	PreTokenizer *hfPreTokenizer `json:"pre_tokenizer"`
	Model        hfModel         `json:"model"`
}

// hfAddedToken is a token matched literally before pre-tokenization, such as
// "<|begin_of_text|>" or "<|im_start|>".
type hfAddedToken struct {
	ID      int    `json:"id"`
	Content string `json:"content"`
}

// hfNormalizer is a normalizer or a Sequence of them. Prepend and Replace
// are the SentencePiece-style ones (Llama 2, Mistral).
type hfNormalizer struct {
	Type        string         `json:"type"`
	Normalizers []hfNormalizer `json:"normalizers"`
	Prepend     string         `json:"prepend"`
	Pattern     hfPattern      `json:"pattern"`
	Content     string         `json:"content"`
}

// hfPreTokenizer is a Split, a ByteLevel, or a Sequence of them; or a
// Metaspace (SentencePiece-style files).
type hfPreTokenizer struct {
	Type           string           `json:"type"`
	Pretokenizers  []hfPreTokenizer `json:"pretokenizers"`
	Pattern        hfPattern        `json:"pattern"`
	Behavior       string           `json:"behavior"`
	Invert         bool             `json:"invert"`
	AddPrefixSpace bool             `json:"add_prefix_space"`
	UseRegex       *bool            `json:"use_regex"`
	Replacement    string           `json:"replacement"`
	PrependScheme  string           `json:"prepend_scheme"`
	Split          *bool            `json:"split"`
}

// hfPattern is a Split pattern: a regex, or a literal string.
type hfPattern struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
}

// hfModel is the BPE model: vocabulary and ranked merges. Merges come as
// "a b" strings in older files and as ["a", "b"] pairs in newer ones.
type hfModel struct {
	Type         string            `json:"type"`
	Vocab        map[string]int    `json:"vocab"`
	Merges       []json.RawMessage `json:"merges"`
	IgnoreMerges bool              `json:"ignore_merges"`
	ByteFallback bool              `json:"byte_fallback"`
	UnkToken     *string           `json:"unk_token"`
	FuseUnk      bool              `json:"fuse_unk"`
}

// LoadHFTokenizer loads a BPE tokenizer from a Hugging Face tokenizer.json
// at path. It accepts the byte-level shapes Llama 3, Qwen 2 and GPT-2 use
// (an optional NFC normalizer; a pre-tokenizer made of regex Splits with
// behavior Isolated and a ByteLevel step) and the SentencePiece-style
// shapes of Llama 2 and Mistral (spaces marked "▁" by Prepend and Replace
// normalizers or a Metaspace pre-tokenizer; byte_fallback), each with a
// BPE model with ranked merges.
// Anything else is an error naming the unsupported part, because silently
// tokenizing differently from the server would defeat the purpose.
func LoadHFTokenizer(path string) (Tokenizer, error) {
	return loadHFTokenizer(context.Background(), path)
}

// loadHFTokenizer reads path bounded by inputfile.Tokenizer's limit,
// stopping when ctx is done.
func loadHFTokenizer(ctx context.Context, path string) (Tokenizer, error) {
	data, err := inputfile.Read(ctx, path, inputfile.Tokenizer)
	if _, binary := errors.AsType[*inputfile.NotTextError](err); binary {
		return nil, fmt.Errorf("tokenizer: %w (a SentencePiece tokenizer.model must end in .model)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return parseHFTokenizer(data, path)
}

// parseHFTokenizer builds the tokenizer of a tokenizer.json's contents;
// name is used in errors and returned by Name.
func parseHFTokenizer(data []byte, name string) (Tokenizer, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, jsonErrorAt(data, err))
	}
	if isSentencePieceStyle(&f) {
		t, err := newHFSentencePiece(&f)
		if err != nil {
			return nil, fmt.Errorf("tokenizer %s: %w", name, err)
		}
		t.name = name
		return t, nil
	}
	t, err := newBPE(&f)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	t.name = name
	return t, nil
}

// jsonErrorAt adds the line number to a JSON syntax or type error.
func jsonErrorAt(data []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("line %d: %w", lineAt(data, syn.Offset), err)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("line %d: %w", lineAt(data, typ.Offset), jsonTypeProblem(err, nil))
	}
	return err
}

// lineAt returns the 1-based line holding byte offset off of data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// newBPE checks a parsed tokenizer.json and builds the tokenizer.
func newBPE(f *hfFile) (*bpeTokenizer, error) {
	if f.Model.Type != "BPE" {
		return nil, fmt.Errorf("model.type %q: only byte-level BPE is supported", f.Model.Type)
	}
	nfc, err := parseNormalizer(f.Normalizer)
	if err != nil {
		return nil, err
	}
	t := &bpeTokenizer{nfc: nfc, ignoreMerges: f.Model.IgnoreMerges}
	if err := t.setPreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if err := t.setVocab(f.Model.Vocab); err != nil {
		return nil, err
	}
	if err := t.setMerges(f.Model.Merges); err != nil {
		return nil, err
	}
	t.setAddedTokens(f.AddedTokens)
	t.cache = newPieceCache()
	return t, nil
}

// parseNormalizer reports whether the normalizer asks for NFC, the only
// normalization byte-level BPE files use (Qwen 2 does; Llama 3 has none).
func parseNormalizer(n *hfNormalizer) (nfc bool, err error) {
	if n == nil {
		return false, nil
	}
	switch n.Type {
	case "NFC":
		return true, nil
	case "Sequence":
		for _, inner := range n.Normalizers {
			ok, err := parseNormalizer(&inner)
			if err != nil {
				return false, err
			}
			nfc = nfc || ok
		}
		return nfc, nil
	}
	return false, fmt.Errorf("normalizer.type %q: only NFC (or none) is supported", n.Type)
}

// setPreTokenizer compiles the split patterns. A byte-level tokenizer needs
// a ByteLevel step; Splits before it cut the text into pieces that BPE
// never merges across.
func (t *bpeTokenizer) setPreTokenizer(p *hfPreTokenizer) error {
	if p == nil {
		return errors.New("pre_tokenizer: missing; a byte-level BPE needs a ByteLevel pre-tokenizer")
	}
	steps := []hfPreTokenizer{*p}
	if p.Type == "Sequence" {
		steps = p.Pretokenizers
	}
	byteLevel := false
	for i, s := range steps {
		switch s.Type {
		case "ByteLevel":
			byteLevel = true
			t.addPrefixSpace = s.AddPrefixSpace
			if s.UseRegex == nil || *s.UseRegex {
				if err := t.addSplit(gpt2SplitPattern); err != nil {
					return fmt.Errorf("pre_tokenizer ByteLevel: %w", err)
				}
			}
		case "Split":
			if err := t.addSplitStep(s); err != nil {
				return fmt.Errorf("pre_tokenizer step %d (Split): %w", i, err)
			}
		default:
			return fmt.Errorf("pre_tokenizer step %d: type %q is not supported (want Split or ByteLevel)", i, s.Type)
		}
	}
	if !byteLevel {
		return errors.New("pre_tokenizer: no ByteLevel step; only byte-level BPE is supported")
	}
	return nil
}

// addSplitStep adds a Split pre-tokenizer. Only "Isolated" splitting is
// supported: every match and every gap between matches becomes a piece,
// which is what Llama 3 and Qwen 2 use.
func (t *bpeTokenizer) addSplitStep(s hfPreTokenizer) error {
	if s.Behavior != "Isolated" || s.Invert {
		return fmt.Errorf("behavior %q invert %v: only Isolated without invert is supported", s.Behavior, s.Invert)
	}
	switch {
	case s.Pattern.Regex != nil:
		return t.addSplit(*s.Pattern.Regex)
	case s.Pattern.String != nil:
		return t.addSplit(regexp2.Escape(*s.Pattern.String))
	}
	return errors.New("pattern: want Regex or String")
}

// addSplit compiles one split regex. The regexes use lookahead, which Go's
// regexp lacks, hence regexp2; the common patterns (Llama 3's is cl100k's)
// run on code the tiktoken package generated and registered for them.
func (t *bpeTokenizer) addSplit(pattern string) error {
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return fmt.Errorf("pattern %q: %w", pattern, err)
	}
	t.splits = append(t.splits, re)
	return nil
}

// setVocab maps each token's byte-level string back to the raw bytes it
// stands for, so encoding looks pieces up without translating them.
func (t *bpeTokenizer) setVocab(vocab map[string]int) error {
	if len(vocab) == 0 {
		return errors.New("model.vocab: empty")
	}
	t.ids = make(map[string]int32, len(vocab))
	maxID := 0
	for tok, id := range vocab {
		raw, err := byteLevelDecode(tok)
		if err != nil {
			return fmt.Errorf("model.vocab %q: %w", tok, err)
		}
		if id < 0 || id >= 1<<30 {
			return fmt.Errorf("model.vocab %q: id %d out of range", tok, id)
		}
		t.ids[raw] = int32(id)
		maxID = max(maxID, id)
	}
	t.tokens = make([]string, maxID+1)
	for raw, id := range t.ids {
		t.tokens[id] = raw
	}
	for b := range 256 {
		id, ok := t.ids[string([]byte{byte(b)})]
		if !ok {
			return fmt.Errorf("model.vocab: no token for byte 0x%02x (%q); a byte-level vocabulary has all 256", b, byteToRune[b])
		}
		t.byteIDs[b] = id
	}
	return nil
}

// setMerges ranks the merges by their order in the file.
func (t *bpeTokenizer) setMerges(merges []json.RawMessage) error {
	t.merges = make(map[uint64]bpeMerge, len(merges))
	for rank, raw := range merges {
		a, b, err := parseMerge(raw)
		if err != nil {
			return fmt.Errorf("model.merges[%d]: %w", rank, err)
		}
		ra, errA := byteLevelDecode(a)
		rb, errB := byteLevelDecode(b)
		if err := errors.Join(errA, errB); err != nil {
			return fmt.Errorf("model.merges[%d]: %w", rank, err)
		}
		ia, okA := t.ids[ra]
		ib, okB := t.ids[rb]
		id, okM := t.ids[ra+rb]
		if !okA || !okB || !okM {
			return fmt.Errorf("model.merges[%d] %q + %q: a part or the merged token is not in the vocabulary", rank, a, b)
		}
		key := pairKey(ia, ib)
		if _, dup := t.merges[key]; !dup {
			t.merges[key] = bpeMerge{rank: int32(rank), id: id}
		}
	}
	return nil
}

// parseMerge reads one merge: "a b" or ["a", "b"].
func parseMerge(raw json.RawMessage) (a, b string, err error) {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		a, b, ok := strings.Cut(s, " ")
		if !ok || a == "" || b == "" {
			return "", "", fmt.Errorf("%q: want two tokens separated by one space", s)
		}
		return a, b, nil
	}
	var pair []string
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
		return "", "", fmt.Errorf("%s: want \"a b\" or [\"a\", \"b\"]", raw)
	}
	return pair[0], pair[1], nil
}

// setAddedTokens registers the literal tokens and their text for Decode.
func (t *bpeTokenizer) setAddedTokens(added []hfAddedToken) {
	t.tokens = t.added.set(added, t.tokens)
}

// set registers the literal tokens, longest first so that one which is a
// prefix of another never wins over it, and returns tokens (id -> text)
// extended with their text.
func (a *addedTokens) set(added []hfAddedToken, tokens []string) []string {
	for _, at := range added {
		if at.Content == "" || at.ID < 0 || at.ID >= 1<<30 {
			continue
		}
		a.list = append(a.list, addedToken{content: at.Content, id: int32(at.ID)})
		a.first[at.Content[0]] = true
		if at.ID >= len(tokens) {
			tokens = append(tokens, make([]string, at.ID+1-len(tokens))...)
		}
		tokens[at.ID] = at.Content
	}
	sort.SliceStable(a.list, func(i, j int) bool { return len(a.list[i].content) > len(a.list[j].content) })
	return tokens
}

// byteToRune is GPT-2's byte-to-unicode table: printable Latin-1 bytes
// stand for themselves and the other 68 bytes (controls, space, 0x7f-0xa0,
// 0xad) map to U+0100 onwards, so every byte has a visible, non-space
// character and vocabularies can be stored as JSON text. A space (0x20) is
// thus "Ġ" (U+0120) and a newline "Ċ" (U+010A).
var byteToRune, runeToByte = byteLevelTables()

// byteLevelTables builds the byte-to-unicode table and its inverse.
func byteLevelTables() (b2r [256]rune, r2b map[rune]byte) {
	r2b = make(map[rune]byte, 256)
	next := rune(256)
	for b := range 256 {
		printable := (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff)
		if printable {
			b2r[b] = rune(b)
		} else {
			b2r[b] = next
			next++
		}
		r2b[b2r[b]] = byte(b)
	}
	return b2r, r2b
}

// byteLevelDecode turns a byte-level token string back into raw bytes.
func byteLevelDecode(tok string) (string, error) {
	out := make([]byte, 0, len(tok))
	for _, r := range tok {
		b, ok := runeToByte[r]
		if !ok {
			return "", fmt.Errorf("character %q is not in the byte-level alphabet", r)
		}
		out = append(out, b)
	}
	return string(out), nil
}

// applyNFC normalizes s when the tokenizer asks for it.
func (t *bpeTokenizer) applyNFC(s string) string {
	if t.nfc {
		return norm.NFC.String(s)
	}
	return s
}
