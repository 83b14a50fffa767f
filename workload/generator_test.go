package workload

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/inferload/inferload/internal/golden"
)

// approxTokens counts tokens the way Text builds them: one per word and
// one per sentence-ending period.
func approxTokens(s string) int {
	return len(strings.Fields(s)) + strings.Count(s, ".")
}

func mustGenerator(t testing.TB, cfg GeneratorConfig) *Generator {
	t.Helper()
	g, err := NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustDist(t testing.TB, s string) Dist {
	t.Helper()
	d, err := ParseDist(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestTextLength(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{0, 1, 7, 8, 9, 21, 512, 4096} {
		got := Text(rng, n)
		if c := approxTokens(got); c != n {
			t.Errorf("Text(n=%d) has %d tokens: %q", n, c, clip(got))
		}
		if n > 0 && !strings.HasPrefix(got, " ") {
			t.Errorf("Text(n=%d) does not start with a word: %q", n, clip(got))
		}
	}
}

func TestTextDeterministic(t *testing.T) {
	t.Parallel()
	a := Text(rand.New(rand.NewPCG(3, 4)), 300)
	b := Text(rand.New(rand.NewPCG(3, 4)), 300)
	c := Text(rand.New(rand.NewPCG(3, 5)), 300)
	if a != b {
		t.Error("same rng state gave different text")
	}
	if a == c {
		t.Error("different rng state gave the same text")
	}
}

func TestGeneratorSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		input, output string
		index         uint64
	}{
		// A single-token prompt still works (the opening is cut to fit).
		{"1", "1", 0},
		// A prompt shorter than the random opening plus index.
		{"4", "16", 1 << 40},
		// A typical fixed-length request.
		{"512", "128", 5},
		// Uniform lengths land inside their bounds.
		{"uniform(100,200)", "uniform(10,20)", 99},
	}
	for _, tt := range tests {
		in, out := mustDist(t, tt.input), mustDist(t, tt.output)
		g := mustGenerator(t, GeneratorConfig{Seed: 1, Input: in, Output: out, IgnoreEOS: true})
		s := g.Spec(tt.index)
		if s.Index != tt.index || s.Class != DefaultClass || !s.IgnoreEOS {
			t.Errorf("%s/%s #%d: spec header %+v", tt.input, tt.output, tt.index, s)
		}
		if s.InputTokens < in.Min() || s.InputTokens > in.Max() || s.MaxTokens < out.Min() || s.MaxTokens > out.Max() {
			t.Errorf("%s/%s: lengths %d/%d outside the distributions", tt.input, tt.output, s.InputTokens, s.MaxTokens)
		}
		if c := approxTokens(s.Prompt); c != s.InputTokens {
			t.Errorf("%s #%d: prompt has %d tokens, want %d: %q", tt.input, tt.index, c, s.InputTokens, clip(s.Prompt))
		}
	}
}

func TestGeneratorDeterminism(t *testing.T) {
	t.Parallel()
	cfg := GeneratorConfig{Seed: 42, Input: mustDist(t, "uniform(32,64)"), Output: mustDist(t, "uniform(1,100)")}
	a, b := mustGenerator(t, cfg), mustGenerator(t, cfg)
	cfg.Seed = 43
	other := mustGenerator(t, cfg)
	for i := range uint64(200) {
		if !reflect.DeepEqual(a.Spec(i), b.Spec(i)) {
			t.Fatalf("same seed, index %d: specs differ", i)
		}
		if a.Spec(i).Prompt == other.Spec(i).Prompt {
			t.Fatalf("seeds 42 and 43 gave the same prompt for index %d", i)
		}
	}
}

func TestGeneratorPromptsDifferEarly(t *testing.T) {
	t.Parallel()
	// Every prompt must differ from every other within its first few words,
	// or a server's prefix cache would serve them all from one entry.
	g := mustGenerator(t, GeneratorConfig{Seed: 1, Input: Fixed(64), Output: Fixed(8)})
	const n = 5000
	seen := make(map[string]uint64, n)
	for i := range uint64(n) {
		head := strings.Join(strings.Fields(g.Spec(i).Prompt)[:prefixWords+2], " ")
		if j, dup := seen[head]; dup {
			t.Fatalf("requests %d and %d open with the same words %q", j, i, head)
		}
		seen[head] = i
	}
}

func TestGeneratorConcurrent(t *testing.T) {
	t.Parallel()
	g := mustGenerator(t, GeneratorConfig{Seed: 9, Input: mustDist(t, "uniform(10,50)"), Output: Fixed(4)})
	want := make([]Spec, 64)
	for i := range want {
		want[i] = g.Spec(uint64(i))
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(want))
	for i := range want {
		wg.Go(func() {
			// Asked out of order and concurrently, each spec is unchanged.
			j := len(want) - 1 - i
			if !reflect.DeepEqual(g.Spec(uint64(j)), want[j]) {
				errs <- fmt.Sprintf("spec %d changed under concurrency", j)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestNewGeneratorErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg     GeneratorConfig
		wantErr string
	}{
		// The input distribution is required.
		{GeneratorConfig{Output: Fixed(1)}, "input length distribution is missing"},
		// The output distribution is required.
		{GeneratorConfig{Input: Fixed(1)}, "output length distribution is missing"},
		// An empty prompt is never sent.
		{GeneratorConfig{Input: Fixed(0), Output: Fixed(1)}, "prompts need at least 1 token"},
		// A uniform that can reach zero output tokens is refused.
		{GeneratorConfig{Input: Fixed(1), Output: uniform{0, 5}}, "ask for at least 1 token"},
	}
	for _, tt := range tests {
		_, err := NewGenerator(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("NewGenerator(%+v) error = %v; want %q", tt.cfg, err, tt.wantErr)
		}
	}
}

// TestGeneratorGolden pins the exact specs for a seed, so that a change to
// the word list, the draw order or the rng (which would silently change
// every user's workload) shows up in review. Refresh with -update.
func TestGeneratorGolden(t *testing.T) {
	t.Parallel()
	g := mustGenerator(t, GeneratorConfig{Seed: 1, Input: mustDist(t, "uniform(4,24)"), Output: mustDist(t, "uniform(1,256)")})
	var b strings.Builder
	for _, i := range []uint64{0, 1, 2, 503, 1 << 40} {
		s := g.Spec(i)
		fmt.Fprintf(&b, "%d in=%d out=%d %q\n", s.Index, s.InputTokens, s.MaxTokens, s.Prompt)
	}
	golden.Check(t, filepath.Join("testdata", "specs.golden"), []byte(b.String()))
}

// BenchmarkSpec builds prompts unsalted and, as every run does by
// default, with the run's salt.
func BenchmarkSpec(b *testing.B) {
	for _, salt := range []string{"", "3f9a0c1e77b2"} {
		for _, n := range []int{128, 512, 4096} {
			b.Run(fmt.Sprintf("input=%d/salted=%v", n, salt != ""), func(b *testing.B) {
				g := mustGenerator(b, GeneratorConfig{Seed: 1, Input: Fixed(n), Output: Fixed(128), Salt: salt})
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					_ = g.Spec(uint64(i))
				}
			})
		}
	}
}

// clip shortens long text in failure messages.
func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

func ExampleGenerator() {
	in, _ := ParseDist("12")
	out, _ := ParseDist("uniform(64,256)")
	g, err := NewGenerator(GeneratorConfig{Seed: 1, Input: in, Output: out, IgnoreEOS: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range uint64(2) {
		s := g.Spec(i)
		fmt.Printf("%d: %d tokens, max_tokens %d:%s\n", s.Index, s.InputTokens, s.MaxTokens, s.Prompt)
	}
	// Output:
	// 0: 12 tokens, max_tokens 228: price very have the Our small farmer changed our clear key.
	// 1: 12 tokens, max_tokens 202: days least once of My teacher loved his red film yesterday.
}
