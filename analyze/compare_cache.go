package analyze

import (
	"fmt"
	"math"

	"github.com/inferload/inferload/record"
)

// CachedShareGap is how far apart, in share of prompt tokens, the two
// runs' server-reported cached prompt tokens may be before a comparison
// warns: 5 percentage points. A prefix cache that served 5% more of one
// run's prompts took that much prefill off its TTFT, which is the size of
// difference a comparison is asked to find; below it, run-to-run noise
// of shared prefixes the workload itself declares.
const CachedShareGap = 0.05

// PromptCache is what a run's server said of its prefix cache: the prompt
// tokens of the measured successes and how many of them it reported
// cached (record.Result.CachedTokens: vLLM's cached_tokens, llama.cpp's
// cache_n).
type PromptCache struct {
	PromptTokens int64 `json:"prompt_tokens"`
	CachedTokens int64 `json:"cached_tokens"`
}

// add counts one measured success.
func (pc *PromptCache) add(r *record.Result) {
	pc.PromptTokens += int64(r.InputTokens)
	pc.CachedTokens += int64(r.CachedTokens)
}

// Share is the cached part of the prompt tokens, 0 without any.
func (pc PromptCache) Share() float64 {
	if pc.PromptTokens <= 0 {
		return 0
	}
	return float64(pc.CachedTokens) / float64(pc.PromptTokens)
}

// cacheWarning is the comparison's warning when the two runs' cached
// shares differ by CachedShareGap or more (rule above), naming the run a
// warm prefix cache flatters; "" otherwise. The usual cause is a run that
// resent an earlier run's prompts (workload.salt off or fixed), finding
// them cached.
func cacheWarning(base, cur PromptCache) string {
	b, c := base.Share(), cur.Share()
	if math.Abs(c-b) < CachedShareGap {
		return ""
	}
	flattered := "current"
	if b > c {
		flattered = "baseline"
	}
	return fmt.Sprintf("cached prompt tokens differ: baseline %d (%.1f%% of %d), current %d (%.1f%% of %d): "+
		"a warm prefix cache flatters the %s run's TTFT; did it resend an earlier run's prompts (workload.salt off or fixed)?",
		base.CachedTokens, b*100, base.PromptTokens, cur.CachedTokens, c*100, cur.PromptTokens, flattered)
}
