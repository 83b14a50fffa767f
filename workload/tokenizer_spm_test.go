package workload

import (
	"encoding/json"
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
			data, err := os.ReadFile(filepath.Join(dir, model+".cases.json"))
			if err != nil {
				t.Fatal(err)
			}
			var cases []spmCase
			if err := json.Unmarshal(data, &cases); err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
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
