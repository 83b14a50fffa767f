package record

// PrefixReuse sets the prefix reuse the workload asked for against what
// the server says it reused: summary.json's prefix_reuse. A replayed
// Mooncake trace builds each prompt from hash blocks, so a block sent
// earlier in the run is there to be served from cache (Result.ReuseTokens);
// the server's cached_tokens say how much was (Result.CachedTokens). Both
// are summed over the measured successful requests, and each share is
// over its own side's prompt count. Present once some measured success
// was built to reuse; the prefix_reuse_low hint reads it.
type PrefixReuse struct {
	// Requests counts the measured successful requests compared.
	Requests int64 `json:"requests"`
	// RequestedShare is Σ reuse_tokens ÷ Σ prompt_tokens_sent: the share
	// of the prompt tokens sent that the trace asked a cache to serve.
	RequestedShare float64 `json:"requested_share"`
	// AchievedShare is Σ cached_tokens ÷ Σ input tokens (the server's
	// prompt_tokens, else the client's count): the share the server says
	// its cache served. 0 when the server reports no cached tokens, which
	// CachedRequests tells from a cache that served nothing only if some
	// request reported one.
	AchievedShare float64 `json:"achieved_share"`
	// CachedRequests counts those requests with cached_tokens > 0.
	CachedRequests int64 `json:"cached_requests"`
	// AchievedFrom says where AchievedShare came from: "requests" (the
	// replies' cached_tokens), "counters" (the server's prefix-cache
	// counters over the measured window), "hit_rate" (its hit-rate
	// gauge) or "none" (the server said nothing of its cache). Run-wide
	// only; classes' shares are always their replies'. Set by the
	// summary's assembly (observe.ServedPrefixShare).
	AchievedFrom string `json:"achieved_from,omitempty"`
}

// Where prefix_reuse's achieved share came from (PrefixReuse.AchievedFrom).
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

// prefixReuseState sums the tokens PrefixReuse divides.
type prefixReuseState struct {
	requests, cachedRequests int64
	reuse, sent              int64 // the workload's side, in its tokens
	cached, input            int64 // the server's side, in its tokens
}

// add folds in a measured success.
func (p *prefixReuseState) add(r *Result) {
	p.requests++
	p.reuse += int64(r.ReuseTokens)
	p.sent += int64(r.PromptTokensSent)
	p.cached += int64(r.CachedTokens)
	p.input += int64(inputTokens(r))
	if r.CachedTokens > 0 {
		p.cachedRequests++
	}
}

// summary is nil unless some request was built to reuse a prefix.
func (p *prefixReuseState) summary() *PrefixReuse {
	if p.reuse == 0 {
		return nil
	}
	out := &PrefixReuse{Requests: p.requests, CachedRequests: p.cachedRequests,
		RequestedShare: float64(p.reuse) / float64(max(p.sent, 1))}
	if p.input > 0 {
		out.AchievedShare = float64(p.cached) / float64(p.input)
	}
	return out
}
