package analyze

import (
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// cacheRun is a run of n measured successes of prompt tokens each, the
// server reporting cached tokens for each, plus extra records that must
// not count (warm-up, failures).
func cacheRun(name string, n, prompt, cached int, extra ...*record.Result) *RunSamples {
	rs := NewRunSamples(name)
	for i := range n {
		rs.Add(&record.Result{ID: uint64(i), Stream: true, TTFTUS: 1000, E2EUS: 2000, SendUS: int64(i) * 1000,
			InputTokens: prompt, CachedTokens: cached, OutputTokens: 1})
	}
	for _, r := range extra {
		rs.Add(r)
	}
	rs.Close(record.RunInfo{EndUS: int64(n+1) * 1000})
	return rs
}

// TestCompareWarnsOnCachedTokens: the comparison warns when the shares of
// server-reported cached prompt tokens differ by CachedShareGap (5
// points) or more, naming the side the cache flatters, and only then.
func TestCompareWarnsOnCachedTokens(t *testing.T) {
	t.Parallel()
	warm := &record.Result{Warmup: true, InputTokens: 128, CachedTokens: 128, E2EUS: 10}
	failed := &record.Result{Error: record.ErrHTTP5xx, InputTokens: 128, CachedTokens: 128, E2EUS: 10}
	tests := []struct {
		name      string
		base, cur *RunSamples
		want      string // a part of the warning; "" for none
	}{
		// The user's report: a cold baseline, then a run that resent its
		// prompts: 860 of 1280 tokens cached (67.2%).
		{"warm current", cacheRun("b", 10, 128, 0), cacheRun("c", 10, 128, 86), "baseline 0 (0.0% of 1280), current 860 (67.2% of 1280): a warm prefix cache flatters the current run"},
		// The other way round flatters the baseline.
		{"warm baseline", cacheRun("b", 10, 128, 40), cacheRun("c", 10, 128, 0), "flatters the baseline run"},
		// Neither run's server reported any cached token.
		{"both cold", cacheRun("b", 10, 128, 0), cacheRun("c", 10, 128, 0), ""},
		// Both runs share a declared prefix: close shares are noise.
		{"close shares", cacheRun("b", 10, 100, 50), cacheRun("c", 10, 100, 46), ""},
		// Exactly the gap (5 of 100 tokens) warns.
		{"at the gap", cacheRun("b", 10, 100, 0), cacheRun("c", 10, 100, 5), "current 50 (5.0% of 1000)"},
		// Just under it does not.
		{"under the gap", cacheRun("b", 10, 1000, 0), cacheRun("c", 10, 1000, 49), ""},
		// Cached tokens of warm-up and failed requests are not the run's.
		{"warm-up and failures", cacheRun("b", 10, 128, 0), cacheRun("c", 10, 128, 0, warm, failed), ""},
	}
	for _, tt := range tests {
		c := Compare(tt.base, tt.cur, CompareOptions{NoRunsCheck: true})
		got := strings.Join(c.Warnings, "\n")
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: warnings %q, want one containing %q", tt.name, got, tt.want)
		}
	}
}
