package workload

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// llama3SplitPattern is the pre-tokenizer regex of Llama 3's tokenizer.json;
// it is also cl100k_base's split pattern.
const llama3SplitPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// cl100kAsHF builds cl100k_base as a Hugging Face tokenizer.json, the way
// Llama 3's file was derived from it, and loads it. It is built once per
// test binary: it takes about a second.
var cl100kAsHF = sync.OnceValues(func() (Tokenizer, error) {
	tok, err := LoadTokenizer(Cl100kBase)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(hfFromRanks(tiktokenRanks(tok), llama3SplitPattern))
	if err != nil {
		return nil, err
	}
	return parseHFTokenizer(data, "cl100k-as-tokenizer.json")
})

// tiktokenRanks recovers the byte string of every id of a tiktoken
// encoding; an id's rank is the id itself.
func tiktokenRanks(tok Tokenizer) []string {
	const cl100kSize = 100256 // ids 0..100255; special tokens come after
	ranks := make([]string, cl100kSize)
	for id := range ranks {
		ranks[id] = tok.Decode([]int{id})
	}
	return ranks
}

// hfFromRanks builds the tokenizer.json of a tiktoken-style rank table.
// tiktoken merges the pair whose concatenation has the lowest rank; the
// equivalent merge list gives each multi-byte token the one merge that
// builds it (found by running BPE on its bytes with only lower ranks
// allowed), in rank order.
func hfFromRanks(ranks []string, pattern string) map[string]any {
	rankOf := make(map[string]int, len(ranks))
	for r, s := range ranks {
		rankOf[s] = r
	}
	vocab := make(map[string]int, len(ranks))
	var merges [][2]string
	for r, s := range ranks {
		vocab[byteLevelEncode(s)] = r
		if len(s) < 2 {
			continue
		}
		if parts := bpeBelow(rankOf, s, r); len(parts) == 2 {
			merges = append(merges, [2]string{byteLevelEncode(parts[0]), byteLevelEncode(parts[1])})
		}
	}
	return map[string]any{
		"added_tokens": []map[string]any{{"id": 100257, "content": "<|endoftext|>", "special": true}},
		"normalizer":   nil,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []map[string]any{
			{"type": "Split", "pattern": map[string]string{"Regex": pattern}, "behavior": "Isolated", "invert": false},
			{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
		}},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": merges, "ignore_merges": false},
	}
}

// bpeBelow runs tiktoken's BPE on s using only ranks below limit. Parts
// are kept as boundaries into s, so candidate pairs are substrings and the
// 100k runs allocate little.
func bpeBelow(rankOf map[string]int, s string, limit int) []string {
	bounds := make([]int, len(s)+1)
	for i := range bounds {
		bounds[i] = i
	}
	for {
		best, bestRank := -1, limit
		for i := 0; i+2 < len(bounds); i++ {
			if r, ok := rankOf[s[bounds[i]:bounds[i+2]]]; ok && r < bestRank {
				best, bestRank = i, r
			}
		}
		if best < 0 {
			break
		}
		bounds = slices.Delete(bounds, best+1, best+2)
	}
	parts := make([]string, len(bounds)-1)
	for i := range parts {
		parts[i] = s[bounds[i]:bounds[i+1]]
	}
	return parts
}

// byteLevelEncode spells raw bytes in GPT-2's byte-level alphabet.
func byteLevelEncode(raw string) string {
	out := make([]rune, len(raw))
	for i := range len(raw) {
		out[i] = byteToRune[raw[i]]
	}
	return string(out)
}

// TestHFTokenizerMatchesTiktoken is the differential test of the BPE: a
// tokenizer.json derived from cl100k_base (as Llama 3's was) must encode
// every text exactly as tiktoken does.
func TestHFTokenizerMatchesTiktoken(t *testing.T) {
	t.Parallel()
	hf, err := cl100kAsHF()
	if err != nil {
		t.Fatal(err)
	}
	ref := mustTokenizer(t, Cl100kBase)
	texts := []string{
		"hello world",
		"The quick brown fox jumps over the lazy dog's back; it's 2024!",
		"antidisestablishmentarianism and pneumonoultramicroscopicsilicovolcanoconiosis",
		"numbers 1234567 3.14159 -42 1e10 0x1F",
		"  leading spaces\n\n\ttabs\r\nand   runs of    spaces   ",
		"Ünïcödé façade naïve 日本語のテキスト 中文文本测试 한국어 😀🎉👍🏽",
		"code: func main() { fmt.Println(\"hi\") } // x := a[i+1] << 2",
		"SHOUTING WORDS AND I'M HERE, YOU'RE THERE, WE'LL SEE",
		"\x00\x01 control \u200b zero-width \ufeff bom",
		Text(rand.New(rand.NewPCG(3, 3)), 2000),
	}
	for _, s := range texts {
		want := ref.Encode(s)
		if got := hf.Encode(s); !slices.Equal(got, want) {
			t.Errorf("Encode(%.40q):\n got %v\nwant %v", s, got, want)
		}
		if got := hf.Decode(want); got != s {
			t.Errorf("Decode(%.40q) = %.40q", s, got)
		}
	}
	// An added token is one id, not its characters.
	if got := hf.Encode("a<|endoftext|>b"); !slices.Equal(got, []int{64, 100257, 65}) {
		t.Errorf("Encode with added token = %v, want [64 100257 65]", got)
	}
}

func TestHFTokenizerTextOfTokensExact(t *testing.T) {
	t.Parallel()
	tok, err := cl100kAsHF()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{1, 5, 100, 2048} {
		if got := tok.Count(TextOfTokens(tok, rng, n)); got != n {
			t.Errorf("TextOfTokens(%d) has %d tokens", n, got)
		}
	}
}

// BenchmarkTextOfTokens2k is the cost of building one 2k-token prompt to
// an exact length: the embedded encodings skip the tokenizer, a
// tokenizer.json pays for an encode and a recount.
func BenchmarkTextOfTokens2k(b *testing.B) {
	hf, err := cl100kAsHF()
	if err != nil {
		b.Fatal(err)
	}
	for _, tok := range []Tokenizer{mustTokenizer(b, Cl100kBase), hf} {
		b.Run(tok.Name(), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			for b.Loop() {
				TextOfTokens(tok, rng, 2048)
			}
		})
	}
}

// BenchmarkCount2k is the cost of measuring a 2k-token prompt.
func BenchmarkCount2k(b *testing.B) {
	hf, err := cl100kAsHF()
	if err != nil {
		b.Fatal(err)
	}
	text := Text(rand.New(rand.NewPCG(1, 1)), 2048)
	for _, tok := range []Tokenizer{mustTokenizer(b, Cl100kBase), mustTokenizer(b, O200kBase), hf} {
		b.Run(tok.Name(), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				tok.Count(text)
			}
		})
	}
}
