package workload

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
)

// TestEnglishGrammarWordsAreOneToken proves the premise of the English
// grammar: every word of every part-of-speech group, and every sentence
// opener with and without its leading space, is one token in both OpenAI
// encodings.
func TestEnglishGrammarWordsAreOneToken(t *testing.T) {
	groups := [][]string{enDets, enAgents, enVerbs, enThings, enAdjs, enPreps, enPlaces, enAdverbs, enConjs, {" the"}}
	for _, o := range enOpeners {
		groups = append(groups, []string{o, " " + o})
	}
	for _, name := range []string{Cl100kBase, O200kBase} {
		tok := mustTokenizer(t, name)
		for _, g := range groups {
			for _, w := range g {
				if c := tok.Count(w); c != 1 {
					t.Errorf("%s: %q is %d tokens, want 1", name, w, c)
				}
			}
		}
	}
}

// TestTextLanguagesExactLength checks exact token counts for every length
// 1..128 and a spread of lengths up to 2048: English for both OpenAI
// encodings, Chinese for cl100k_base (its default) and o200k_base.
func TestTextLanguagesExactLength(t *testing.T) {
	lengths := []int{}
	for n := 1; n <= 128; n++ {
		lengths = append(lengths, n)
	}
	for n := 129; n < 2048; n += 61 {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 2048)
	cases := []struct {
		name, enc string
		text      func(tok Tokenizer, rng *rand.Rand, n int) string
	}{
		// English prose needs no tokenizer: exact for cl100k by construction.
		{"en/cl100k", Cl100kBase, func(_ Tokenizer, rng *rand.Rand, n int) string { return Text(rng, n) }},
		// The same words are one token in o200k too.
		{"en/o200k", O200kBase, func(_ Tokenizer, rng *rand.Rand, n int) string { return Text(rng, n) }},
		// Chinese is fitted to the default tokenizer.
		{"zh/cl100k", Cl100kBase, func(_ Tokenizer, rng *rand.Rand, n int) string { return TextZh(nil, rng, n) }},
		// And to an explicitly chosen one.
		{"zh/o200k", O200kBase, TextZh},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok := mustTokenizer(t, tc.enc)
			for _, n := range lengths {
				got := tc.text(tok, rand.New(rand.NewPCG(uint64(n), 9)), n)
				if c := tok.Count(got); c != n {
					t.Errorf("n=%d: %d tokens: %q", n, c, clip(got))
				}
			}
		})
	}
}

// TestChineseTextShape proves the Chinese text is Chinese prose: CJK
// characters, sentences ending in 。, paragraphs, valid UTF-8, and no
// ASCII letters.
func TestChineseTextShape(t *testing.T) {
	got := TextZh(nil, rand.New(rand.NewPCG(1, 2)), 600)
	han := 0
	for _, r := range got {
		if unicode.Is(unicode.Han, r) {
			han++
		}
		if r < unicode.MaxASCII && unicode.IsLetter(r) {
			t.Fatalf("ASCII letter %q in Chinese text: %q", r, clip(got))
		}
	}
	if han < 300 {
		t.Errorf("only %d Han characters in 600 tokens: %q", han, clip(got))
	}
	if c := strings.Count(got, "。"); c < 10 {
		t.Errorf("%d sentences ending in 。, want at least 10: %q", c, clip(got))
	}
	if !strings.Contains(got, "。\n\n") {
		t.Errorf("no paragraph break after a sentence: %q", clip(got))
	}
	if !strings.ContainsRune(got[:len(got)-1], '。') || strings.ToValidUTF8(got, "?") != got {
		t.Errorf("invalid text: %q", clip(got))
	}
}

// TestEnglishTextShape proves English prose has capitalised sentences and
// paragraphs: after every full stop comes a capitalised opener.
func TestEnglishTextShape(t *testing.T) {
	got := Text(rand.New(rand.NewPCG(4, 4)), 500)
	if !strings.Contains(got, ".\n\n") {
		t.Errorf("no paragraph break: %q", clip(got))
	}
	for _, sep := range []string{". ", ".\n\n"} {
		parts := strings.Split(got, sep)
		for _, p := range parts[1:] {
			if p == "" || !unicode.IsUpper(rune(p[0])) {
				t.Errorf("sentence after %q does not start with a capital: %q", sep, clip(p))
			}
		}
	}
}

// TestTextLanguagesDeterministic proves both languages are pure functions
// of the rng state: same seed, same text; another seed, another text.
func TestTextLanguagesDeterministic(t *testing.T) {
	cases := []struct {
		name string
		text func(rng *rand.Rand) string
	}{
		// English prose.
		{"en", func(rng *rand.Rand) string { return Text(rng, 700) }},
		// Chinese prose, fitted to cl100k_base.
		{"zh", func(rng *rand.Rand) string { return TextZh(nil, rng, 700) }},
	}
	for _, tc := range cases {
		a := tc.text(rand.New(rand.NewPCG(7, 7)))
		b := tc.text(rand.New(rand.NewPCG(7, 7)))
		c := tc.text(rand.New(rand.NewPCG(7, 8)))
		if a != b {
			t.Errorf("%s: same seed gave different text", tc.name)
		}
		if a == c {
			t.Errorf("%s: different seeds gave the same text", tc.name)
		}
	}
}

// TestGeneratorLanguage proves the Generator picks the language's prose
// with exact lengths, and rejects an unknown language.
func TestGeneratorLanguage(t *testing.T) {
	zh, err := NewGenerator(GeneratorConfig{Seed: 3, Input: Fixed(300), Output: Fixed(10), Language: LanguageChinese})
	if err != nil {
		t.Fatal(err)
	}
	tok := mustTokenizer(t, Cl100kBase)
	s := zh.Spec(5)
	if c := tok.Count(s.Prompt); c != 300 || !strings.Contains(s.Prompt, "。") {
		t.Errorf("zh spec: %d tokens (want 300): %q", c, clip(s.Prompt))
	}
	if s2 := zh.Spec(5); s2.Prompt != s.Prompt {
		t.Error("zh spec 5 differs between calls")
	}
	_, err = NewGenerator(GeneratorConfig{Input: Fixed(3), Output: Fixed(3), Language: "fr"})
	if err == nil || !strings.Contains(err.Error(), `"fr"`) {
		t.Errorf("language fr: err = %v, want it named", err)
	}
}

// A Chinese class's shared prefix is Chinese too, and exactly its length.
func TestChinesePrefix(t *testing.T) {
	t.Parallel()
	g, err := NewGenerator(GeneratorConfig{Seed: 5, Input: Fixed(40), Output: Fixed(8), Language: LanguageChinese,
		Prefix: SharedPrefix{Tokens: 30, Fraction: 1, Groups: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.prefixes) != 1 || g.cfg.Tokenizer.Count(g.prefixes[0]) != 30 || !containsHan(g.prefixes[0]) {
		t.Fatalf("prefix %q: want 30 tokens of Chinese", g.prefixes)
	}
	s := g.Spec(0)
	if !strings.HasPrefix(s.Prompt, g.prefixes[0]) || s.InputTokens != 70 {
		t.Errorf("spec %+v: want the prefix first and 30+40 input tokens", s)
	}
}

func containsHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}
