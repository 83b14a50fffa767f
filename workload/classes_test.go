package workload

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func mustMix(t testing.TB, cfg MixConfig) *Mix {
	t.Helper()
	m, err := NewMix(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// docMix is the documented example: prompts of 128/512/2048 tokens mixed
// 7:2:1 plus a rare 4096, outputs 128 or 512.
func docMix(t testing.TB, bad float64) MixConfig {
	out := mustDist(t, "buckets(128:1,512:1)")
	return MixConfig{Seed: 7, BadInput: BadInputConfig{Fraction: bad, MaxContext: 4096}, Classes: []ClassConfig{
		{Name: "chat", Weight: 7, Input: Fixed(128), Output: out},
		{Name: "rag", Weight: 2, Input: Fixed(512), Output: out},
		{Name: "doc", Weight: 1, Input: Fixed(2048), Output: out},
		{Name: "huge", Weight: 0.1, Input: Fixed(4096), Output: out},
	}}
}

func TestMixClassFrequencies(t *testing.T) {
	t.Parallel()
	m := mustMix(t, docMix(t, 0.05))
	const n = 50_000
	counts := map[string]int{}
	for i := range uint64(n) {
		counts[m.Spec(i).Class]++
	}
	// Shares follow the weights after the 5% of bad input; chi-square with
	// 4 degrees of freedom stays under 18.5 (α = 0.001).
	rest := 0.95 / 10.1
	want := map[string]float64{"chat": 7 * rest, "rag": 2 * rest, "doc": rest, "huge": 0.1 * rest, BadInputClass: 0.05}
	chi := 0.0
	for class, p := range want {
		e := p * n
		chi += (float64(counts[class]) - e) * (float64(counts[class]) - e) / e
	}
	if chi > 18.5 || len(counts) != len(want) {
		t.Errorf("class counts %v: chi-square %.1f", counts, chi)
	}
	if got := strings.Join(m.ClassNames(), ","); got != "chat,rag,doc,huge,bad_input" {
		t.Errorf("class names %s", got)
	}
}

func TestMixDeterministic(t *testing.T) {
	t.Parallel()
	a, b := mustMix(t, docMix(t, 0.1)), mustMix(t, docMix(t, 0.1))
	other := docMix(t, 0.1)
	other.Seed++
	c := mustMix(t, other)
	differ := 0
	for i := range uint64(300) {
		sa := a.Spec(i)
		if !reflect.DeepEqual(sa, b.Spec(i)) {
			t.Fatalf("same config, request %d: specs differ", i)
		}
		if sa.Class != c.Spec(i).Class {
			differ++
		}
		// Each class's lengths are its own.
		if want := map[string]int{"chat": 128, "rag": 512, "doc": 2048, "huge": 4096}[sa.Class]; want > 0 && sa.InputTokens != want {
			t.Errorf("request %d of class %s has %d tokens", i, sa.Class, sa.InputTokens)
		}
	}
	if differ == 0 {
		t.Error("another seed picked the same classes for 300 requests")
	}
}

func TestMixSingleClassMatchesGenerator(t *testing.T) {
	t.Parallel()
	// One class and no bad input sends exactly what the plain generator
	// sends, so adding the classes feature changed no existing workload.
	cfg := GeneratorConfig{Seed: 3, Input: mustDist(t, "uniform(10,90)"), Output: Fixed(9), Class: DefaultClass}
	g := mustGenerator(t, cfg)
	m := mustMix(t, MixConfig{Seed: 3, Classes: []ClassConfig{{Name: DefaultClass, Weight: 1, Input: cfg.Input, Output: cfg.Output}}})
	for i := range uint64(100) {
		if !reflect.DeepEqual(g.Spec(i), m.Spec(i)) {
			t.Fatalf("request %d differs", i)
		}
	}
}

func TestNewMixErrors(t *testing.T) {
	t.Parallel()
	ok := ClassConfig{Name: "a", Weight: 1, Input: Fixed(8), Output: Fixed(8)}
	with := func(f func(c *ClassConfig)) []ClassConfig {
		c := ok
		f(&c)
		return []ClassConfig{c}
	}
	tests := []struct {
		cfg  MixConfig
		want string
	}{
		{MixConfig{}, "no request classes"},                                                  // empty
		{MixConfig{Classes: with(func(c *ClassConfig) { c.Weight = 0 })}, "want a positive"}, // zero weight
		{MixConfig{Classes: with(func(c *ClassConfig) { c.Weight = math.NaN() })}, "want a positive"},
		{MixConfig{Classes: with(func(c *ClassConfig) { c.Name = "a b" })}, "class name"}, // bad name
		{MixConfig{Classes: []ClassConfig{ok, ok}}, "defined twice"},                      // duplicate
		{MixConfig{Classes: with(func(c *ClassConfig) { c.Name = BadInputClass }), BadInput: BadInputConfig{Fraction: 0.1, MaxContext: 9}}, "reserved"},
		{MixConfig{Classes: with(func(c *ClassConfig) { c.Input = Fixed(0) }), Seed: 1}, "class a"},     // empty prompts
		{MixConfig{Classes: []ClassConfig{ok}, BadInput: BadInputConfig{Fraction: 0.1}}, "max_context"}, // no context
		{MixConfig{Classes: []ClassConfig{ok}, BadInput: BadInputConfig{Fraction: 1}}, "[0, 1)"},        // all bad
		{MixConfig{Classes: with(func(c *ClassConfig) { c.Prefix = SharedPrefix{Tokens: 10, Fraction: 2} })}, "fraction"},
		{MixConfig{Classes: with(func(c *ClassConfig) { c.Prefix = SharedPrefix{Tokens: 1 << 19, Groups: 4} })}, "in all"},
	}
	for i, tt := range tests {
		_, err := NewMix(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("case %d: error %v, want %q", i, err, tt.want)
		}
	}
}

func TestSharedPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prefix    SharedPrefix
		wantShare float64 // of requests carrying a prefix
		groups    int
	}{
		{SharedPrefix{Tokens: 100}, 1, 1},                            // every request, one prefix
		{SharedPrefix{Tokens: 50, Fraction: 0.3}, 0.3, 1},            // 30% share the prefix
		{SharedPrefix{Tokens: 20, Fraction: 0.5, Groups: 4}, 0.5, 4}, // four tenants
	}
	for _, tt := range tests {
		g := mustGenerator(t, GeneratorConfig{Seed: 2, Input: Fixed(30), Output: Fixed(4), Prefix: tt.prefix})
		const n = 4000
		seen, with := map[string]int{}, 0
		groupHead := map[int]string{}
		for i := range uint64(n) {
			s := g.Spec(i)
			if s.InputTokens == 30 {
				if s.PrefixGroup != 0 || s.PrefixTokens != 0 {
					t.Fatalf("%+v: request %d carries no prefix but names group %d", tt.prefix, i, s.PrefixGroup)
				}
				if approxTokens(s.Prompt) != 30 {
					t.Fatalf("%+v: prompt without prefix has %d tokens", tt.prefix, approxTokens(s.Prompt))
				}
				continue
			}
			with++
			if s.InputTokens != 30+tt.prefix.Tokens || approxTokens(s.Prompt) != s.InputTokens {
				t.Fatalf("%+v: %d tokens, spec says %d", tt.prefix, approxTokens(s.Prompt), s.InputTokens)
			}
			head := strings.Join(strings.Fields(s.Prompt)[:tt.prefix.Tokens/2], " ")
			if s.PrefixTokens != tt.prefix.Tokens || s.PrefixGroup < 1 || s.PrefixGroup > tt.groups ||
				(groupHead[s.PrefixGroup] != "" && groupHead[s.PrefixGroup] != head) {
				t.Fatalf("%+v: request %d names prefix group %d of %d tokens, or its group's text differs", tt.prefix, i, s.PrefixGroup, s.PrefixTokens)
			}
			groupHead[s.PrefixGroup] = head
			seen[head]++
		}
		if got := float64(with) / n; math.Abs(got-tt.wantShare) > 0.03 {
			t.Errorf("%+v: %.3f of requests carry a prefix, want %.2f", tt.prefix, got, tt.wantShare)
		}
		if len(seen) != tt.groups {
			t.Errorf("%+v: %d distinct prefixes, want %d", tt.prefix, len(seen), tt.groups)
		}
	}
}

func TestBadInputKinds(t *testing.T) {
	t.Parallel()
	m := mustMix(t, MixConfig{Seed: 1, BadInput: BadInputConfig{Fraction: 0.5, MaxContext: 1000},
		Classes: []ClassConfig{{Name: "ok", Weight: 1, Input: Fixed(8), Output: Fixed(8)}}})
	kinds := map[string]int{}
	for i := range uint64(2000) {
		s := m.Spec(i)
		if s.Class != BadInputClass {
			if s.Expect != "" || s.BadInput != "" {
				t.Fatalf("ordinary request %d expects %q", i, s.Expect)
			}
			continue
		}
		kinds[s.BadInput]++
		if s.Expect != ExpectRejection {
			t.Errorf("bad request %d does not expect a rejection", i)
		}
		// Each kind has its one defect.
		switch s.BadInput {
		case BadEmpty:
			if s.Prompt != "" {
				t.Errorf("empty prompt is %q", s.Prompt)
			}
		case BadTooLong:
			if approxTokens(s.Prompt) <= 1000 {
				t.Errorf("beyond_context prompt has only %d tokens", approxTokens(s.Prompt))
			}
		case BadUnicode:
			if !utf8.ValidString(s.Prompt) || !strings.ContainsFunc(s.Prompt, func(r rune) bool { return r < 0x20 || r > 0xffff }) {
				t.Errorf("odd_unicode prompt is not odd: %q", s.Prompt)
			}
		case BadZeroMaxTokens:
			if s.MaxTokens != 0 {
				t.Errorf("max_tokens_zero asks for %d", s.MaxTokens)
			}
		case BadHugeMaxTokens:
			if s.MaxTokens != HugeMaxTokens {
				t.Errorf("max_tokens_huge asks for %d", s.MaxTokens)
			}
		}
	}
	for _, k := range BadInputKinds {
		if kinds[k] < 150 {
			t.Errorf("kind %s drawn %d times of about 200", k, kinds[k])
		}
	}
}

// BenchmarkMixSpec: picking a class costs one extra small rng over the
// class's own Spec; the documented 7:2:1 mix averages about 500 tokens.
func BenchmarkMixSpec(b *testing.B) {
	m := mustMix(b, docMix(b, 0.02))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = m.Spec(uint64(i))
	}
}
