package workload

import (
	"fmt"
	"testing"
)

// TestSpecAllocsDoNotGrowWithPrompt: building an English spec allocates a
// fixed number of times (its random source and the prompt's one
// up-front-sized buffer), whatever the prompt's length. Rule: a spec of n
// tokens allocates no more often than one of 128 tokens with the same
// configuration. Each row is a prompt length whose sentences number in the
// tens to hundreds, so one allocation per sentence (as rng.Perm made until
// the grammar drew its options into an array) fails every row by far.
func TestSpecAllocsDoNotGrowWithPrompt(t *testing.T) {
	allocs := func(salt string, n int) float64 {
		g := mustGenerator(t, GeneratorConfig{Seed: 1, Input: Fixed(n), Output: Fixed(16), Salt: salt})
		i := uint64(0)
		return testing.AllocsPerRun(50, func() {
			_ = g.Spec(i)
			i++
		})
	}
	for _, tc := range []struct {
		salt string
		n    int
	}{
		{"", 512},               // about 40 sentences
		{"", 4096},              // about 340 sentences
		{"3f9a0c1e77b2", 4096},  // the run's salt opens the prompt: same rule
		{"3f9a0c1e77b2", 20000}, // a long document
	} {
		t.Run(fmt.Sprintf("salt=%q/n=%d", tc.salt, tc.n), func(t *testing.T) {
			base, got := allocs(tc.salt, 128), allocs(tc.salt, tc.n)
			if got > base {
				t.Errorf("a %d-token spec allocates %.0f times, a 128-token one %.0f", tc.n, got, base)
			}
		})
	}
}
