package workload

import (
	"slices"
	"strings"
	"testing"
)

// Documents join a class's specs: as many as asked, each of its drawn
// length, InputTokens what a cross-encoder reads (the query once per
// document, then the documents), the same for the same (seed, index),
// and leaving the prompt (the query) as it was without them.
func TestDocuments(t *testing.T) {
	t.Parallel()
	base := ClassConfig{Name: "rerank", Weight: 1, Input: Fixed(12), Output: Fixed(1)}
	withDocs := base
	withDocs.Documents = DocumentConfig{Count: 4, Tokens: Fixed(30)}
	plain, err := NewMix(MixConfig{Seed: 7, Classes: []ClassConfig{base}})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := NewMix(MixConfig{Seed: 7, Classes: []ClassConfig{withDocs}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range uint64(5) {
		p, d, again := plain.Spec(i), docs.Spec(i), docs.Spec(i)
		if d.Prompt != p.Prompt || len(p.Documents) != 0 {
			t.Errorf("request %d: documents changed the query or came without being asked", i)
		}
		if want := 4*p.InputTokens + 4*30; len(d.Documents) != 4 || d.InputTokens != want {
			t.Errorf("request %d: %d documents, %d input tokens; want 4 and %d", i, len(d.Documents), d.InputTokens, want)
		}
		if !slices.Equal(d.Documents, again.Documents) {
			t.Errorf("request %d: documents differ between two draws", i)
		}
		for _, doc := range d.Documents {
			// One token a word or stop in the word list (Text).
			if n := len(strings.Fields(doc)); n < 20 || n > 30 {
				t.Errorf("request %d: a document of %d words, want about 30: %q", i, n, doc)
			}
		}
		if d.Documents[0] == d.Documents[1] {
			t.Errorf("request %d: two documents alike", i)
		}
	}
	for _, bad := range []DocumentConfig{{Count: -1}, {Count: MaxDocuments + 1, Tokens: Fixed(1)}, {Count: 2}} {
		c := base
		c.Documents = bad
		if _, err := NewMix(MixConfig{Seed: 1, Classes: []ClassConfig{c}}); err == nil {
			t.Errorf("documents %+v accepted", bad)
		}
	}
}
