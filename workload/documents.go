package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// MaxDocuments bounds the documents of one rerank or score request:
// rerankers are served a few dozen to a few hundred candidates, and the
// bound keeps a typo from building gigabytes of prompts.
const MaxDocuments = 1000

// DocumentConfig asks for Count documents of Tokens tokens each (drawn
// per document) with every request: what the rerank and score APIs score
// the prompt, the query, against.
type DocumentConfig struct {
	// Count is the number of documents per request (0: none).
	Count int
	// Tokens is each document's length.
	Tokens Dist
}

// Validate checks the count and that a length is given with one.
func (c DocumentConfig) Validate() error {
	switch {
	case c.Count < 0 || c.Count > MaxDocuments:
		return fmt.Errorf("documents: count %d: want 0 to %d", c.Count, MaxDocuments)
	case c.Count > 0 && c.Tokens == nil:
		return errors.New("documents: tokens: set each document's length (e.g. 256 or uniform(64,512))")
	}
	return nil
}

// documentStream separates the draws of a request's documents from its
// other draws, so adding documents leaves its prompt as it was.
const documentStream = 0xd0c5_5eed

// withDocuments adds a class's documents to the specs of its source.
type withDocuments struct {
	src  Source
	seed uint64
	cfg  DocumentConfig
}

// Spec returns the source's spec with cfg.Count documents drawn from
// (seed, i). Documents are English prose (Text): exact in tokens for the
// cl100k and o200k tokenizers, close for others.
//
// InputTokens becomes what the model reads: a cross-encoder reads each
// (query, document) pair, so the query counts once per document, as the
// servers' usage does (vLLM's rerank and score): 4 documents of 30 tokens
// behind a 12-token query are 4 × 12 + 120 = 168 tokens, not the 132 sent.
func (w *withDocuments) Spec(i uint64) Spec {
	s := w.src.Spec(i)
	rng := rand.New(rand.NewPCG(w.seed^documentStream, splitmix64(i)))
	s.Documents = make([]string, w.cfg.Count)
	s.InputTokens *= w.cfg.Count
	for k := range s.Documents {
		n := max(w.cfg.Tokens.Sample(rng), 1)
		s.Documents[k] = Text(rng, n)
		s.InputTokens += n
	}
	return s
}
