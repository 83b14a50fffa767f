package record

import "testing"

// TestPrefixReuse: the shares are token sums over the measured successes,
// each over its own side's prompt count; warm-up records and failures
// stay out; a run that asked for no reuse has no prefix_reuse.
func TestPrefixReuse(t *testing.T) {
	t.Parallel()
	ok := func(sent, input, reuse, cached int) Result {
		return Result{E2EUS: 1000, OutputTokens: 2, TokenSource: TokensUsage,
			PromptTokensSent: sent, InputTokens: input, ReuseTokens: reuse, CachedTokens: cached}
	}
	tests := []struct {
		name string
		recs []Result
		want *PrefixReuse
	}{
		// Two requests of 1000 tokens sent, the second built to reuse
		// 600: requested 600/2000; the server counts 990 a prompt and
		// served 495 of the second: achieved 495/1980.
		{"requested against achieved", []Result{ok(1000, 990, 0, 0), ok(1000, 990, 600, 495)},
			&PrefixReuse{Requests: 2, RequestedShare: 0.3, AchievedShare: 0.25, CachedRequests: 1}},
		// A server with no usage: the client's count stands in for the
		// input, and no cached tokens means an achieved share of 0.
		{"no usage", []Result{ok(400, 0, 200, 0), ok(400, 0, 0, 0)},
			&PrefixReuse{Requests: 2, RequestedShare: 0.25}},
		// Warm-up and failed requests are not compared.
		{"measured successes only", []Result{ok(100, 100, 50, 50),
			{Warmup: true, PromptTokensSent: 100, ReuseTokens: 100, CachedTokens: 0},
			{Error: ErrHTTP5xx, PromptTokensSent: 100, ReuseTokens: 100}},
			&PrefixReuse{Requests: 1, RequestedShare: 0.5, AchievedShare: 0.5, CachedRequests: 1}},
		// Cache hits the workload did not build for (no reuse_tokens):
		// nothing was requested, so nothing to compare.
		{"none requested", []Result{ok(100, 100, 0, 64)}, nil},
	}
	for _, tt := range tests {
		got := summarize(closedInfo, tt.recs).PrefixReuse
		if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
			t.Errorf("%s: prefix_reuse %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
