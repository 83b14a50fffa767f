package workload

import (
	"encoding/json"
	"slices"
	"testing"
)

// tinySPMJSON is a hand-made SentencePiece-style tokenizer.json with the
// given normalizer and pre-tokenizer. Its merges, by rank: a+▁ (0), ▁+a
// (1), a+b (2), ▁a+b (3), ▁+b (4). No byte fallback: x, y and z are
// unknown and fuse into one <unk>. "a▁" crosses a space, so words are not
// split unless a Metaspace asks for it.
func tinySPMJSON(t *testing.T, normalizer, preTokenizer any) []byte {
	t.Helper()
	data, err := json.Marshal(map[string]any{
		"added_tokens":  []map[string]any{{"id": 2, "content": "</s>", "special": true}},
		"normalizer":    normalizer,
		"pre_tokenizer": preTokenizer,
		"model": map[string]any{
			"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": false,
			"vocab": map[string]int{"<unk>": 0, "<s>": 1, "</s>": 2, "▁": 3, "a": 4, "b": 5,
				"▁a": 6, "▁b": 7, "ab": 8, "▁ab": 9, "a▁": 10},
			"merges": []string{"a ▁", "▁ a", "a b", "▁a b", "▁ b"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestHFSentencePieceShapes(t *testing.T) {
	t.Parallel()
	llama2 := map[string]any{"type": "Sequence", "normalizers": []map[string]any{
		{"type": "Prepend", "prepend": "▁"},
		{"type": "Replace", "pattern": map[string]string{"String": " "}, "content": "▁"},
	}}
	metaspace := func(scheme string, split bool) map[string]any {
		return map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": split}
	}
	tests := []struct {
		shape      string
		normalizer any
		pretok     any
		text       string
		want       []int
		roundTrips bool // Decode(want) gives text back
	}{
		// ▁ a b: ▁+a (1) before a+b (2), then ▁a+b (3).
		{"llama2", llama2, nil, "ab", []int{9}, true},
		// ▁ b ▁ a: ▁+a (1) first, then ▁+b (4).
		{"llama2", llama2, nil, "b a", []int{7, 6}, true},
		// Prepend adds ▁ even before a space: ▁ ▁ a b.
		{"llama2", llama2, nil, " ab", []int{3, 9}, true},
		// ▁ a ▁ b: a+▁ (0) merges across the space, as the model says.
		{"llama2", llama2, nil, "a b", []int{3, 10, 5}, true},
		// The added token is cut out and each side gets its own ▁.
		{"llama2", llama2, nil, "ab</s>b", []int{9, 2, 7}, false},
		// Three unknown characters fuse into one <unk>.
		{"llama2", llama2, nil, "xyz b", []int{3, 0, 7}, false},
		// No text, no tokens (no lone ▁ either).
		{"llama2", llama2, nil, "", []int{}, true},
		// Metaspace "first" adds no ▁ to text already starting with one.
		{"first", nil, metaspace("first", false), " ab", []int{9}, false},
		// ... nor to text after an added token.
		{"first", nil, metaspace("first", false), "</s>ab", []int{2, 8}, false},
		{"first", nil, metaspace("first", false), "ab</s>b", []int{9, 2, 5}, false},
		// "always" adds it after an added token too.
		{"always", nil, metaspace("always", true), "</s>ab", []int{2, 9}, false},
		// split true cuts before each ▁, so a+▁ can no longer apply.
		{"always+split", nil, metaspace("always", true), "a b", []int{6, 7}, true},
		{"always", nil, metaspace("always", false), "a b", []int{3, 10, 5}, true},
	}
	for _, tt := range tests {
		tok, err := parseHFTokenizer(tinySPMJSON(t, tt.normalizer, tt.pretok), tt.shape)
		if err != nil {
			t.Fatalf("%s: %v", tt.shape, err)
		}
		if got := tok.Encode(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Encode(%q) = %v, want %v", tt.shape, tt.text, got, tt.want)
		}
		if got := tok.Count(tt.text); got != len(tt.want) {
			t.Errorf("%s: Count(%q) = %d, want %d", tt.shape, tt.text, got, len(tt.want))
		}
		if got := tok.Decode(tt.want); tt.roundTrips && got != tt.text {
			t.Errorf("%s: Decode(%v) = %q, want %q", tt.shape, tt.want, got, tt.text)
		}
	}
}
