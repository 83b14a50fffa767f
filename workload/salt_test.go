package workload

import (
	"path/filepath"
	"strings"
	"testing"
)

// saltLengths are the prompt lengths the salt tests build: shorter than
// the salt, exactly it, just above, and ordinary ones.
var saltLengths = []int{1, 2, SaltWords - 1, SaltWords, SaltWords + 1, 7, 16, 64, 300}

// Two runs of one plan (one seed) with different salts send different
// prompts of exactly the same token counts, whatever the language,
// tokenizer or shared prefix; the same salt sends the same prompts.
func TestSaltChangesPromptsNotLengths(t *testing.T) {
	t.Parallel()
	tiny, err := LoadTokenizer(filepath.Join("testdata", "tokenizer", "tiny.json"))
	if err != nil {
		t.Fatal(err)
	}
	cl100k := mustTokenizer(t, Cl100kBase)
	cases := []struct {
		name   string
		cfg    GeneratorConfig
		counts Tokenizer // what measures the prompts
	}{
		// The word list without a tokenizer: one token a word in cl100k.
		{"en/words", GeneratorConfig{}, cl100k},
		// o200k takes the same path.
		{"en/o200k", GeneratorConfig{Tokenizer: mustTokenizer(t, O200kBase)}, mustTokenizer(t, O200kBase)},
		// A tokenizer that splits the words: the salt is counted with it.
		{"en/hf-tiny", GeneratorConfig{Tokenizer: tiny}, tiny},
		// Chinese prose after English salt words, fitted to cl100k.
		{"zh/cl100k", GeneratorConfig{Language: LanguageChinese}, cl100k},
		// A shared prefix comes after the salt; its tokens add to the input.
		{"en/prefix", GeneratorConfig{Prefix: SharedPrefix{Tokens: 20, Fraction: 1, Groups: 2}}, cl100k},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, n := range saltLengths {
				run := func(salt string) *Generator {
					cfg := tc.cfg
					cfg.Seed, cfg.Input, cfg.Output, cfg.Salt = 9, Fixed(n), Fixed(4), salt
					return mustGenerator(t, cfg)
				}
				first, second, again := run("3f9a0c1e77b2"), run("8d41be07aa13"), run("3f9a0c1e77b2")
				for i := range uint64(20) {
					a, b := first.Spec(i), second.Spec(i)
					if ca, cb := tc.counts.Count(a.Prompt), tc.counts.Count(b.Prompt); ca != a.InputTokens || cb != b.InputTokens || a.InputTokens != b.InputTokens {
						t.Fatalf("n=%d request %d: prompts of %d and %d tokens, specs say %d and %d", n, i, ca, cb, a.InputTokens, b.InputTokens)
					}
					if n >= SaltWords && a.Prompt == b.Prompt {
						t.Fatalf("n=%d request %d: two salts sent the same prompt %q", n, i, clip(a.Prompt))
					}
					if again.Spec(i).Prompt != a.Prompt {
						t.Fatalf("n=%d request %d: one salt sent two prompts", n, i)
					}
				}
			}
		})
	}
}

// The salt opens every prompt of the run, before the shared prefix, so
// requests that share a prefix within a run still share it (salt
// included), and no prompt of one run opens like a prompt of another.
func TestSaltComesFirstAndKeepsPrefixesShared(t *testing.T) {
	t.Parallel()
	cfg := GeneratorConfig{Seed: 2, Input: Fixed(32), Output: Fixed(4), Salt: "a1", Prefix: SharedPrefix{Tokens: 50, Fraction: 1, Groups: 1}}
	g := mustGenerator(t, cfg)
	cfg.Salt = "b2"
	other := mustGenerator(t, cfg)
	opening := g.salt.text() + g.prefixes[0]
	for i := range uint64(50) {
		p := g.Spec(i).Prompt
		if !strings.HasPrefix(p, opening) {
			t.Fatalf("request %d does not open with the salt and then the shared prefix: %q", i, clip(p))
		}
		if o := other.Spec(i).Prompt; o[:len(g.salt.text())] == p[:len(g.salt.text())] {
			t.Fatalf("request %d opens with the same salt words under salts a1 and b2: %q", i, clip(p))
		}
	}
	if g.prefixes[0] != other.prefixes[0] {
		t.Error("the salt changed the shared prefix itself; it only goes before it")
	}
}

// No salt sends the prompts of before salts existed: the golden specs
// (TestGeneratorGolden) and an empty salt agree, so a replay with the salt
// off is exact.
func TestNoSaltIsTheUnsaltedWorkload(t *testing.T) {
	t.Parallel()
	g := mustGenerator(t, GeneratorConfig{Seed: 4, Input: Fixed(40), Output: Fixed(4)})
	if g.salt.text() != "" {
		t.Fatalf("an empty salt renders %q", g.salt.text())
	}
	if n := approxTokens(g.Spec(0).Prompt); n != 40 {
		t.Errorf("unsalted prompt is %d tokens, want 40", n)
	}
}

// A replayed dataset is salted too: the salt is a line of its own ahead
// of the first message (and the prompt), its tokens added to the entry's,
// so the spec's length stays the prompt's exact length; the dataset's own
// messages are left as they were.
func TestSaltOpensDatasetEntries(t *testing.T) {
	t.Parallel()
	tok := mustTokenizer(t, Cl100kBase)
	for _, file := range []string{"prompts.jsonl", "chat.jsonl"} {
		d, err := LoadDataset(filepath.Join("testdata", "dataset", file), DatasetOptions{Tokenizer: tok})
		if err != nil {
			t.Fatal(err)
		}
		mix := func(salt string) *Mix {
			m, err := NewMix(MixConfig{Seed: 1, Salt: salt, Classes: []ClassConfig{{Name: "d", Weight: 1, Output: Fixed(5), Dataset: d, Tokenizer: tok}}})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		plain, a, b := mix(""), mix("a1"), mix("b2")
		line, lineTokens := newSalt("a1", tok).line(tok)
		for i := range uint64(40) {
			p, s, o := plain.Spec(i), a.Spec(i), b.Spec(i)
			if s.Prompt != line+p.Prompt || s.InputTokens != p.InputTokens+lineTokens {
				t.Fatalf("%s request %d: salted %q (%d tokens), unsalted %q (%d), salt line %q (%d)",
					file, i, s.Prompt, s.InputTokens, p.Prompt, p.InputTokens, line, lineTokens)
			}
			if len(p.Messages) > 0 {
				if s.Messages[0].Content != line+p.Messages[0].Content || len(s.Messages) != len(p.Messages) {
					t.Fatalf("%s request %d: first message %q, want the salt line before %q", file, i, s.Messages[0].Content, p.Messages[0].Content)
				}
				if got := tok.Count(s.Messages[0].Content) - tok.Count(p.Messages[0].Content); got != lineTokens {
					t.Fatalf("%s request %d: the salt added %d tokens, the spec says %d", file, i, got, lineTokens)
				}
			}
			if s.Prompt == o.Prompt {
				t.Fatalf("%s request %d: salts a1 and b2 sent the same prompt", file, i)
			}
		}
		for k := range d.Len() {
			if e := d.Entry(k); strings.HasPrefix(e.Prompt, line) || (len(e.Messages) > 0 && strings.HasPrefix(e.Messages[0].Content, line)) {
				t.Fatalf("%s entry %d was salted in place", file, k)
			}
		}
	}
}

// A conversation keeps its opening: every turn's history starts with the
// first turn's salted message, so the salt adds nothing a turn must
// prefill again.
func TestSaltOpensConversations(t *testing.T) {
	t.Parallel()
	m, err := NewMix(MixConfig{Seed: 3, Salt: "a1", Classes: []ClassConfig{{Name: "chat", Weight: 1, Input: Fixed(24), Output: Fixed(8), Turns: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	salt := newSalt("a1", nil).text()
	s := m.Session(0)
	var opening string
	for i := range uint64(4) {
		spec := s.Next(i)
		first := spec.Messages[0].Content
		if i == 0 {
			opening = first
		}
		if !strings.HasPrefix(first, salt) || first != opening {
			t.Fatalf("turn %d opens with %q, want the first turn's salted message %q", spec.Turn, clip(first), clip(opening))
		}
		if last := spec.Messages[len(spec.Messages)-1].Content; !strings.HasPrefix(last, salt) {
			t.Fatalf("turn %d's new message %q lacks the salt", spec.Turn, clip(last))
		}
	}
}
