package analyze

import (
	"fmt"

	"github.com/inferload/inferload/record"
)

// Prefix-cache hint thresholds (docs/telemetry.md, "Bottleneck hints"):
// the median TTFT of cache hits must be at least PrefixCacheShare lower
// and PrefixCacheMinMS shorter than that of misses of the same input
// bucket, so a hit that saves a rounding error is no verdict.
const (
	PrefixCacheShare = 0.2
	PrefixCacheMinMS = 20.0
)

// prefixCacheTTFT fires when prefix-cache hits (cached_tokens > 0) had a
// clearly shorter median TTFT than misses of the same prompt length: the
// prefix cache is saving prefill, so more shared prefixes, or routing
// requests to the replica that holds theirs, would cut TTFT. Buckets keep
// the comparison fair: a long prompt's hit is not compared with a short
// prompt's miss. Each group needs a backed median (MinSamples). The
// bucket with the largest saving is named. The hits are the run's own:
// every run opens its prompts with its own salt (workload.salt), so a
// cache an earlier run left warm cannot make them, unless the salt was
// turned off or fixed.
func prefixCacheTTFT(in hintInput) *record.Hint {
	need := int64(MinSamples(0.5, DefaultConfidence))
	var best *record.InputBucket
	saving := 0.0
	for i := range in.s.InputBuckets {
		b := &in.s.InputBuckets[i]
		pc := b.PrefixCache
		if pc == nil || pc.Hits < need || pc.Misses < need {
			continue
		}
		d := pc.MissTTFTP50MS - pc.HitTTFTP50MS
		if d >= PrefixCacheMinMS && pc.HitTTFTP50MS <= (1-PrefixCacheShare)*pc.MissTTFTP50MS && d > saving {
			best, saving = b, d
		}
	}
	if best == nil {
		return nil
	}
	pc := best.PrefixCache
	return &record.Hint{Rule: "prefix_cache_ttft",
		Message: fmt.Sprintf("the prefix cache cuts TTFT: prompts of %s tokens that hit it had a median TTFT of %.0f ms against %.0f ms for misses (%.0f%% less; %d hits, %d misses); "+
			"more shared prefixes (a common system prompt) or cache-aware routing would save prefill",
			best.Label, pc.HitTTFTP50MS, pc.MissTTFTP50MS, 100*saving/pc.MissTTFTP50MS, pc.Hits, pc.Misses),
		Figures: map[string]float64{"hit_ttft_p50_ms": pc.HitTTFTP50MS, "miss_ttft_p50_ms": pc.MissTTFTP50MS,
			"hits": float64(pc.Hits), "misses": float64(pc.Misses)}}
}
