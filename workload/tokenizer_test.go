package workload

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mustTokenizer loads spec or stops the test.
func mustTokenizer(t testing.TB, spec string) Tokenizer {
	t.Helper()
	tok, err := LoadTokenizer(spec)
	if err != nil {
		t.Fatalf("LoadTokenizer(%q): %v", spec, err)
	}
	return tok
}

func TestEmbeddedTokenizersKnownIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		enc  string
		text string
		want []int
	}{
		// OpenAI's cookbook example: two common words are one token each.
		{Cl100kBase, "hello world", []int{15339, 1917}},
		// The cookbook's "tiktoken is great!": a rare word splits in three.
		{Cl100kBase, "tiktoken is great!", []int{83, 1609, 5963, 374, 2294, 0}},
		// Digits and operators split at every space and symbol.
		{Cl100kBase, "2 + 2 = 4", []int{17, 489, 220, 17, 284, 220, 19}},
		// Japanese falls back to multi-byte pieces (cookbook example).
		{Cl100kBase, "お誕生日おめでとう", []int{33334, 45918, 243, 21990, 9080, 33334, 62004, 16556, 78699}},
		// o200k has its own ids for the same words.
		{O200kBase, "hello world", []int{24912, 2375}},
	}
	for _, tt := range tests {
		tok := mustTokenizer(t, tt.enc)
		if got := tok.Encode(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("%s Encode(%q) = %v, want %v", tt.enc, tt.text, got, tt.want)
		}
		if got := tok.Count(tt.text); got != len(tt.want) {
			t.Errorf("%s Count(%q) = %d, want %d", tt.enc, tt.text, got, len(tt.want))
		}
		if got := tok.Decode(tt.want); got != tt.text {
			t.Errorf("%s Decode(%v) = %q, want %q", tt.enc, tt.want, got, tt.text)
		}
		if tok.Name() != tt.enc {
			t.Errorf("Name() = %q, want %q", tok.Name(), tt.enc)
		}
	}
}

// tinyTokenizerPath is a hand-written byte-level BPE: the 256 byte tokens
// (id = byte value), seven merges and one added token.
const tinyTokenizerPath = "testdata/tokenizer/tiny.json"

func TestHFTokenizerTinyKnownIDs(t *testing.T) {
	t.Parallel()
	tok := mustTokenizer(t, tinyTokenizerPath)
	tests := []struct {
		text string
		want []int
	}{
		// "h e" (rank 1) merges first, then nothing joins "t" and "he".
		{"the", []int{'t', 257}},
		// Ġ+t (rank 0), h+e (1), then Ġt+he (2): one token.
		{" the", []int{258}},
		// h+e, l+l, he+ll, hell+o: merge order follows rank, not position.
		{"hello", []int{261}},
		// "Ġ h" (rank 6) never applies: h+e (rank 1) took the h first.
		{" hello", []int{' ', 261}},
		// The added token is cut out before the regex split.
		{"hello the<|end|>", []int{261, 258, 300}},
		// Text after an added token is encoded normally.
		{"<|end|>the", []int{300, 't', 257}},
		// A multi-byte character with no merges falls back to its bytes.
		{"é", []int{0xc3, 0xa9}},
		// ignore_merges: a piece already in the vocabulary is one token even
		// without merges leading to it.
		{" xyz", []int{270}},
		// Newlines are their own pieces under the Llama 3 split pattern.
		{"ll\n", []int{259, '\n'}},
		// Empty text has no tokens.
		{"", []int{}},
	}
	for _, tt := range tests {
		got := tok.Encode(tt.text)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%q) = %v, want %v", tt.text, got, tt.want)
		}
		if n := tok.Count(tt.text); n != len(tt.want) {
			t.Errorf("Count(%q) = %d, want %d", tt.text, n, len(tt.want))
		}
		if back := tok.Decode(got); back != tt.text {
			t.Errorf("Decode(Encode(%q)) = %q", tt.text, back)
		}
	}
}

func TestHFTokenizerWithoutIgnoreMerges(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(tinyTokenizerPath)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	edited := strings.Replace(string(data), `"ignore_merges": true`, `"ignore_merges": false`, 1)
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	tok := mustTokenizer(t, path)
	// Without ignore_merges, " xyz" is built by merges only, and there are
	// none for it: Ġ, x, y, z stay apart.
	if got, want := tok.Encode(" xyz"), []int{' ', 'x', 'y', 'z'}; !slices.Equal(got, want) {
		t.Errorf("Encode(\" xyz\") = %v, want %v", got, want)
	}
}

func TestTextOfTokensIsExact(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{Cl100kBase, O200kBase, tinyTokenizerPath,
		"testdata/tokenizer/spm/bpe-bytefallback.model"} {
		tok := mustTokenizer(t, spec)
		rng := rand.New(rand.NewPCG(7, 7))
		for _, n := range []int{1, 2, 3, 17, 128, 513, 2048} {
			s := TextOfTokens(tok, rng, n)
			if got := tok.Count(s); got != n {
				t.Errorf("%s: TextOfTokens(%d) has %d tokens", spec, n, got)
			}
		}
		if s := TextOfTokens(tok, rng, 0); s != "" {
			t.Errorf("%s: TextOfTokens(0) = %q, want empty", spec, s)
		}
	}
}

func TestTextOfTokensIsDeterministic(t *testing.T) {
	t.Parallel()
	tok := mustTokenizer(t, tinyTokenizerPath)
	a := TextOfTokens(tok, rand.New(rand.NewPCG(1, 2)), 300)
	b := TextOfTokens(tok, rand.New(rand.NewPCG(1, 2)), 300)
	c := TextOfTokens(tok, rand.New(rand.NewPCG(1, 3)), 300)
	if a != b {
		t.Error("same seed gave different text")
	}
	if a == c {
		t.Error("different seeds gave the same text")
	}
}

func TestLoadTokenizerErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tiny, err := os.ReadFile(tinyTokenizerPath)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(name, old, repl string) string {
		if !strings.Contains(string(tiny), old) {
			t.Fatalf("tiny.json lacks %q", old)
		}
		return write(name, strings.Replace(string(tiny), old, repl, 1))
	}
	tests := []struct {
		spec string
		want string // substring of the error
	}{
		// No name at all.
		{"", "empty name"},
		// A missing file names the path.
		{filepath.Join(dir, "missing.json"), "missing.json"},
		// Broken JSON reports its line.
		{write("broken.json", "{\n\"model\": {\n  \"type\": \"BPE\",,\n}}"), "line 3"},
		// A WordPiece (BERT) model is refused by name.
		{edit("wordpiece.json", `"type": "BPE"`, `"type": "WordPiece"`), `model.type "WordPiece"`},
		// byte_fallback makes it SentencePiece-style, which marks spaces
		// with ▁ and has no use for a ByteLevel pre-tokenizer.
		{edit("fallback.json", `"byte_fallback": false`, `"byte_fallback": true`), `pre_tokenizer: type "Sequence" is not supported with a SentencePiece-style model`},
		// A SentencePiece model must be protobuf.
		{write("text.model", "{not protobuf"), "not a SentencePiece model"},
		// A binary file named like a tokenizer.json gets a hint.
		{write("binary.json", "\n\x00\x01"), "tokenizer.model must end in .model"},
		// An unknown pre-tokenizer is refused by name.
		{edit("metaspace.json", `"type": "Split"`, `"type": "Metaspace"`), `"Metaspace"`},
		// A merge whose parts are not in the vocabulary.
		{edit("badmerge.json", `"hell o"`, `"hell q"`), "model.merges[5]"},
		// A merge that is not two tokens.
		{edit("onepart.json", `"l l"`, `"ll"`), "two tokens"},
		// A vocabulary missing a byte cannot encode every text.
		{edit("nobyte.json", `"!": 33,`, ``), "byte 0x21"},
		// An unsupported normalizer.
		{edit("lower.json", `"normalizer": null`, `"normalizer": {"type": "Lowercase"}`), `"Lowercase"`},
	}
	for _, tt := range tests {
		_, err := LoadTokenizer(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("LoadTokenizer(%s) error = %v, want it to contain %q", filepath.Base(tt.spec), err, tt.want)
		}
	}
}

func TestHFTokenizerConcurrentUse(t *testing.T) {
	t.Parallel()
	tok := mustTokenizer(t, tinyTokenizerPath)
	want := tok.Encode(Text(rand.New(rand.NewPCG(5, 5)), 200))
	done := make(chan []int)
	for g := range 4 {
		go func() {
			// Each goroutine fills the shared piece cache with other words
			// before encoding the common text.
			tok.Count(Text(rand.New(rand.NewPCG(uint64(g), 1)), 200))
			done <- tok.Encode(Text(rand.New(rand.NewPCG(5, 5)), 200))
		}()
	}
	for range 4 {
		if got := <-done; !slices.Equal(got, want) {
			t.Error("concurrent Encode gave different ids")
		}
	}
}
