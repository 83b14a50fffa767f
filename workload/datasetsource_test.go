package workload

import (
	"path/filepath"
	"reflect"
	"testing"
)

// A class with a tokenizer of its own gets prompts of exactly the asked
// length in that tokenizer's tokens.
func TestGeneratorWithTokenizerIsExact(t *testing.T) {
	t.Parallel()
	tok, err := LoadTokenizer(filepath.Join("testdata", "tokenizer", "tiny.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGenerator(GeneratorConfig{Seed: 3, Input: Fixed(40), Output: Fixed(8), Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	for i := range uint64(5) {
		s := g.Spec(i)
		if n := tok.Count(s.Prompt); n != 40 || s.InputTokens != 40 {
			t.Errorf("spec %d: prompt is %d tokens (spec says %d), want 40", i, n, s.InputTokens)
		}
	}
}

// A dataset class picks entries by (seed, index): deterministic, every
// entry reachable, and the dataset's output length wins over the class's.
func TestDatasetClassSpecs(t *testing.T) {
	t.Parallel()
	d, err := LoadDataset(filepath.Join("testdata", "dataset", "prompts.jsonl"), DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMix(MixConfig{Seed: 1, Classes: []ClassConfig{{Name: "logs", Weight: 1, Output: Fixed(5), Dataset: d}}})
	if err != nil {
		t.Fatal(err)
	}
	prompts := map[string]bool{}
	for i := range uint64(200) {
		s := m.Spec(i)
		if !reflect.DeepEqual(s, m.Spec(i)) {
			t.Fatalf("spec %d differs between calls", i)
		}
		if s.Class != "logs" || s.Prompt == "" || s.MaxTokens < 1 {
			t.Fatalf("spec %d = %+v", i, s)
		}
		prompts[s.Prompt] = true
	}
	if len(prompts) != d.Len() {
		t.Errorf("200 requests reached %d of %d entries", len(prompts), d.Len())
	}
	if _, err := NewMix(MixConfig{Classes: []ClassConfig{{Name: "x", Weight: 1, Dataset: d}}}); err == nil {
		t.Error("a dataset class without an output distribution was accepted")
	}
}
