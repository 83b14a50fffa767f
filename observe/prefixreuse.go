package observe

import "github.com/inferload/inferload/record"

// Where prefix_reuse's achieved share came from (record.PrefixReuse.AchievedFrom).
const (
	// ReuseFromRequests: the replies' own cached_tokens.
	ReuseFromRequests = "requests"
	// ReuseFromCounters: the server's prefix-cache token counters, their
	// increase over the measured window (vLLM's prefix_cache_hits_total ÷
	// prefix_cache_queries_total).
	ReuseFromCounters = "counters"
	// ReuseFromHitRate: the server's own hit-rate gauge, its mean over the
	// measured window (SGLang's cache_hit_rate).
	ReuseFromHitRate = "hit_rate"
	// ReuseFromNone: the server said nothing of its cache.
	ReuseFromNone = "none"
)

// ServedPrefixShare says where prefix_reuse's achieved share comes from,
// and fills it from the server's telemetry when no reply reported cached
// tokens (vLLM without --enable-prompt-tokens-details): the increase of
// its hit and query counters over the measured window, never their
// totals, which count every run since the server started; else its
// hit-rate gauge. Counters are run-wide, so classes keep their replies'
// figures. Call it after Summarize, before the hints read the share.
func ServedPrefixShare(s *record.Summary) {
	pr := s.PrefixReuse
	if pr == nil {
		return
	}
	if pr.CachedRequests > 0 {
		pr.AchievedFrom = ReuseFromRequests
		return
	}
	pr.AchievedFrom = ReuseFromNone
	if s.Server == nil {
		return
	}
	var hits, queries, rates float64
	var nRates int
	for _, src := range s.Server.Sources {
		h, okH := src.Series[PrefixHitTokensPerS]
		q, okQ := src.Series[PrefixQueryTokensPerS]
		if okH && okQ {
			// Each is a mean rate over the window's scrapes, so their
			// ratio is the ratio of the increases at a steady interval.
			hits, queries = hits+h.Mean, queries+q.Mean
		}
		if r, ok := src.Series[PrefixHitRate]; ok {
			rates, nRates = rates+r.Mean, nRates+1
		}
	}
	switch {
	case queries > 0:
		pr.AchievedShare, pr.AchievedFrom = min(hits/queries, 1), ReuseFromCounters
	case nRates > 0:
		pr.AchievedShare, pr.AchievedFrom = rates/float64(nRates), ReuseFromHitRate
	}
}
