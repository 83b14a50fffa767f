package observe

import "github.com/inferload/inferload/record"

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
		pr.AchievedFrom = record.ReuseFromRequests
		return
	}
	pr.AchievedFrom = record.ReuseFromNone
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
		pr.AchievedShare, pr.AchievedFrom = min(hits/queries, 1), record.ReuseFromCounters
	case nRates > 0:
		pr.AchievedShare, pr.AchievedFrom = rates/float64(nRates), record.ReuseFromHitRate
	}
}
