package workload

import (
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// spmCase is one line of a *.cases.json file: a text and the ids the
// reference SentencePiece library gives it.
type spmCase struct {
	Text   string   `json:"text"`
	IDs    []int    `json:"ids"`
	Pieces []string `json:"pieces"`
}

// readSPMCases reads a *.cases.json file.
func readSPMCases(t *testing.T, path string) []spmCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []spmCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestSPMModelMatchesReference encodes every case of each model the way
// the reference C++ SentencePiece encoded it (testdata/tokenizer/spm/README.md
// says how the models and cases were made).
func TestSPMModelMatchesReference(t *testing.T) {
	t.Parallel()
	for _, model := range []string{
		// Llama 2's settings: BPE, byte fallback, identity normalization,
		// dummy prefix, spaces kept as they are.
		"bpe-bytefallback",
		// BPE without byte fallback: runs of unknown characters are one
		// unknown token; extra spaces are removed; a user-defined piece.
		"bpe-unk",
		// Unigram, extra spaces removed, two user-defined pieces.
		"unigram",
	} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("testdata", "tokenizer", "spm")
			tok := mustTokenizer(t, filepath.Join(dir, model+".model"))
			for _, c := range readSPMCases(t, filepath.Join(dir, model+".cases.json")) {
				if got := tok.Encode(c.Text); !slices.Equal(got, c.IDs) {
					t.Errorf("Encode(%q) = %v, want %v (%q)", c.Text, got, c.IDs, c.Pieces)
				}
				if got := tok.Count(c.Text); got != len(c.IDs) {
					t.Errorf("Count(%q) = %d, want %d", c.Text, got, len(c.IDs))
				}
			}
		})
	}
}

// hfFromSPMModel converts a SentencePiece BPE model to a tokenizer.json the
// way Hugging Face's converter made Llama 2's: every piece in the
// vocabulary, a merge for every split of a piece into two pieces, ranked
// by the merged piece's score, and the Prepend + Replace normalizers.
func hfFromSPMModel(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseSPMModelProto(data)
	if err != nil {
		t.Fatal(err)
	}
	vocab := make(map[string]int, len(m.pieces))
	for id, p := range m.pieces {
		vocab[p.text] = id
	}
	type merge struct {
		l, r  string
		score float32
	}
	var merges []merge
	for _, p := range m.pieces {
		for i := 1; i < len(p.text); i++ {
			if _, ok := vocab[p.text[:i]]; ok {
				if _, ok := vocab[p.text[i:]]; ok {
					merges = append(merges, merge{p.text[:i], p.text[i:], p.score})
				}
			}
		}
	}
	slices.SortStableFunc(merges, func(a, b merge) int { return cmp.Compare(b.score, a.score) })
	pairs := make([][2]string, len(merges))
	for i, mg := range merges {
		pairs[i] = [2]string{mg.l, mg.r}
	}
	out, err := json.Marshal(map[string]any{
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []map[string]any{
			{"type": "Prepend", "prepend": spaceMark},
			{"type": "Replace", "pattern": map[string]string{"String": " "}, "content": spaceMark},
		}},
		"pre_tokenizer": nil,
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": pairs,
			"byte_fallback": true, "fuse_unk": true, "unk_token": "<unk>"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHFSentencePieceMatchesReference checks the tokenizer.json route
// (merges by rank, byte fallback before merging) against the reference
// ids of the byte-fallback model, converted as Llama 2's file was.
func TestHFSentencePieceMatchesReference(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "tokenizer", "spm")
	tok, err := parseHFTokenizer(hfFromSPMModel(t, filepath.Join(dir, "bpe-bytefallback.model")), "converted.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tok.(*spmTokenizer); !ok {
		t.Fatalf("loaded as %T, want the SentencePiece-style tokenizer", tok)
	}
	for _, c := range readSPMCases(t, filepath.Join(dir, "bpe-bytefallback.cases.json")) {
		if got := tok.Encode(c.Text); !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q) = %v, want %v (%q)", c.Text, got, c.IDs, c.Pieces)
		}
	}
}

// BenchmarkSPMTextOfTokens2k builds a 2048-token prompt with the small
// Llama-2-style model (600 pieces, so words split into several tokens).
func BenchmarkSPMTextOfTokens2k(b *testing.B) {
	tok := mustTokenizer(b, "testdata/tokenizer/spm/bpe-bytefallback.model")
	rng := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		TextOfTokens(tok, rng, 2048)
	}
}

// BenchmarkSPMCount2k counts a 2048-token prompt with the same model.
func BenchmarkSPMCount2k(b *testing.B) {
	tok := mustTokenizer(b, "testdata/tokenizer/spm/bpe-bytefallback.model")
	s := TextOfTokens(tok, rand.New(rand.NewPCG(1, 1)), 2048)
	for b.Loop() {
		tok.Count(s)
	}
}
