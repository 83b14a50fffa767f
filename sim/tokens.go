package sim

import "strings"

// Prompt tokens are counted, not tokenized: a token is a run of bytes
// between ASCII whitespace, and each ASCII punctuation mark (. , ; : ! ?)
// is a token of its own, as in real BPE vocabularies: "The cat  sat." is 4
// tokens. inferload's synthetic prompts are one real token per word and per
// full stop, so usage figures match what a real server would report for
// them, and counting costs one pass over the bytes with no allocation.

// PromptHasher counts a prompt's tokens and hashes it in blocks, for prefix
// caching: block i's hash covers every token up to the end of block i, so
// two prompts share a cached block exactly when they share the whole prefix
// up to it (vLLM chains its block hashes the same way).
type PromptHasher struct {
	blockSize int
	tokens    int
	inBlock   int
	running   uint64
	hashes    []uint64
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// NewPromptHasher returns a hasher for blocks of blockSize tokens.
func NewPromptHasher(blockSize int) *PromptHasher {
	return &PromptHasher{blockSize: max(blockSize, 1), running: fnvOffset}
}

// AddText counts and hashes the words of s. Separate calls never join a
// word across them, so each chat message starts a new word.
func (h *PromptHasher) AddText(s string) {
	word, inWord := uint64(fnvOffset), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		space := c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
		punct := c == '.' || c == ',' || c == ';' || c == ':' || c == '!' || c == '?'
		if space || punct {
			if inWord {
				h.AddToken(word)
				word, inWord = fnvOffset, false
			}
			if punct {
				h.AddToken((fnvOffset ^ uint64(c)) * fnvPrime)
			}
			continue
		}
		word = (word ^ uint64(c)) * fnvPrime
		inWord = true
	}
	if inWord {
		h.AddToken(word)
	}
}

// AddToken adds one token given by its hash (or its id, for prompts sent
// as token ids).
func (h *PromptHasher) AddToken(tok uint64) {
	h.tokens++
	h.running = (h.running ^ tok) * fnvPrime
	h.inBlock++
	if h.inBlock == h.blockSize {
		h.hashes = append(h.hashes, h.running|1) // 0 means "no hash" in the pool
		h.inBlock = 0
	}
}

// AddReply adds the first n tokens of the reply that starts at word
// offset start in the vocabulary, token by token, so the hashes run on
// from the prompt's into the blocks the reply fills. A conversation's next
// turn opens with this prompt and this reply as text; AddText hashes it to
// the same chain, so a prefix cache that kept the reply's blocks serves
// them, as vLLM and llama.cpp serve a previous turn's output.
func (h *PromptHasher) AddReply(start uint64, n int) {
	for i := range n {
		h.AddText(tokenText(start, i))
	}
}

// Tokens is the number of tokens added so far.
func (h *PromptHasher) Tokens() int { return h.tokens }

// BlockHashes returns the chained hashes of the full blocks so far.
func (h *PromptHasher) BlockHashes() []uint64 { return h.hashes }

// vocabulary is the simulated model's output: plain ASCII words that need
// no JSON escaping, one token each, so counting the words of an answer
// gives its completion_tokens. They carry no punctuation, which AddText
// counts as tokens of its own: a reply read back as a later turn's prompt
// is as many prompt tokens as it was completion tokens, and hashes as the
// engine cached it (AddReply).
var vocabulary = [...]string{
	"the ", "model ", "is ", "simulated ", "and ", "this ", "answer ", "has ",
	"no ", "meaning ", "but ", "its ", "timing ", "does ", "every ", "token ",
	"arrives ", "when ", "a ", "step ", "of ", "batch ", "ends ", "so ",
	"queues ", "grow ", "under ", "load ", "while ", "cache ", "blocks ", "fill ",
	"up ", "then ", "requests ", "wait ", "or ", "get ", "preempted ", "which ",
	"costs ", "time ", "to ", "recompute ", "prefill ", "chunks ", "share ", "budget ",
	"with ", "decodes ", "in ", "one ", "iteration ", "as ", "vLLM ", "does ",
	"Throughput ", "rises ", "until ", "memory ", "runs ", "out ", "latency ", "follows ",
}

// ReplyText is the text of the first n tokens of the reply that starts at
// word offset start: what the simulator writes for such a reply, and what
// a virtual-time fleet threads into a conversation's history in its place.
func ReplyText(start uint64, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(tokenText(start, i))
	}
	return b.String()
}

// tokenText returns the text of output token i of a request whose answer
// starts at word offset start.
func tokenText(start uint64, i int) string {
	return vocabulary[(start+uint64(i))%uint64(len(vocabulary))]
}
