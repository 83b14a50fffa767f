package analyze

import (
	"fmt"

	"github.com/inferload/inferload/record"
)

// Prefix-reuse hint thresholds (docs/telemetry.md, "Bottleneck hints"):
// at least PrefixReuseMinRequests measured requests, a requested share of
// at least PrefixReuseMinShare (a workload that barely asks for reuse
// gives no verdict), and an achieved share below PrefixReuseLowRatio of
// it.
const (
	PrefixReuseMinRequests = 20
	PrefixReuseMinShare    = 0.1
	PrefixReuseLowRatio    = 0.5
)

// prefixReuseLow fires when the server says its prefix cache served less
// than half the prompt tokens the workload built to be reused (a
// Mooncake trace's shared blocks): the cache is too small and evicts the
// blocks before they recur, caching is off, or a router spreads requests
// that share a prefix over replicas that do not. A server that reported no
// cached tokens at all may simply not report them, which the message says.
func prefixReuseLow(in hintInput) *record.Hint {
	pr := in.s.PrefixReuse
	if pr == nil || pr.Requests < PrefixReuseMinRequests || pr.RequestedShare < PrefixReuseMinShare ||
		pr.AchievedShare >= PrefixReuseLowRatio*pr.RequestedShare {
		return nil
	}
	why := "the cache evicts blocks before they recur (too small for the trace), or a router spreads requests that share a prefix over replicas"
	switch {
	case pr.AchievedFrom == record.ReuseFromCounters:
		why += " (the share served is the server's own prefix-cache counters' over the measured window: the replies carried no cached tokens)"
	case pr.AchievedFrom == record.ReuseFromHitRate:
		why += " (the share served is the server's own prefix-cache hit rate's over the measured window: the replies carried no cached tokens)"
	case pr.CachedRequests == 0:
		why = "the server reported no cached tokens on any request and no prefix-cache counters: its prefix cache is off, or it does not report them (vLLM needs --enable-prompt-tokens-details, or its /metrics scraped (observe.scrape) for its counters)"
	}
	return &record.Hint{Rule: "prefix_reuse_low",
		Message: fmt.Sprintf("the server reused %.0f%% of prompt tokens where the workload asked for %.0f%% (%d requests): %s",
			100*pr.AchievedShare, 100*pr.RequestedShare, pr.Requests, why),
		Figures: map[string]float64{"requested_share": pr.RequestedShare, "achieved_share": pr.AchievedShare,
			"requests": float64(pr.Requests), "cached_requests": float64(pr.CachedRequests)}}
}
