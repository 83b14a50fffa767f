package engine

import (
	"testing"

	"github.com/inferload/inferload/protocol"
)

// TestCachedFromTimings: a reply's cached prompt tokens come from the
// server's cache_n where it sends one, else from how many fewer prompt
// tokens it evaluated than its usage counts (llama.cpp b4747), and never
// from a server that evaluated the whole prompt or said nothing.
func TestCachedFromTimings(t *testing.T) {
	for _, c := range []struct {
		name   string
		tm     protocol.ServerTimings
		prompt int
		want   int
	}{
		{"cache_n", protocol.ServerTimings{Present: true, CacheN: 40, PromptN: 60}, 100, 40},
		{"prompt_n below the prompt", protocol.ServerTimings{Present: true, PromptN: 30}, 100, 70},
		{"whole prompt held: last token evaluated", protocol.ServerTimings{Present: true, PromptN: 1}, 100, 99},
		{"whole prompt evaluated", protocol.ServerTimings{Present: true, PromptN: 100}, 100, 0},
		{"no usage", protocol.ServerTimings{Present: true, PromptN: 30}, 0, 0},
		{"no prompt_n (TGI's inference time only)", protocol.ServerTimings{Present: true, InferenceUS: 5}, 100, 0},
	} {
		if got := cachedFromTimings(c.tm, c.prompt); got != c.want {
			t.Errorf("%s: %d cached tokens, want %d", c.name, got, c.want)
		}
	}
}
