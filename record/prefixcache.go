package record

import (
	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// PrefixCacheSplit compares the time to first token of requests the
// server's prefix cache served part of the prompt for (cached_tokens > 0:
// vLLM's usage.prompt_tokens_details.cached_tokens, llama.cpp's cache_n or
// its prompt tokens less the prompt_n it evaluated) with the rest: summary.json's prefix_cache, per run, class and input
// bucket. Present once some measured successful streamed request was a
// hit; the prefix_cache_ttft hint reads it.
type PrefixCacheSplit struct {
	// Hits and Misses count the measured successful streamed requests with
	// a first token, with and without cached prompt tokens.
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
	// HitTTFTP50MS and MissTTFTP50MS are each group's median TTFT; 0 for
	// a group with no request.
	HitTTFTP50MS  float64 `json:"hit_ttft_p50_ms"`
	MissTTFTP50MS float64 `json:"miss_ttft_p50_ms"`
}

// prefixCacheState holds the TTFTs of cache hits; the misses are the
// aggregate's TTFT histogram less the hits, so a run without a hit pays
// for nothing and one hit late in a run still sees every miss before it.
type prefixCacheState struct {
	hit *Hist
}

// add folds in a record whose TTFT the aggregate recorded.
func (p *prefixCacheState) add(r *Result) {
	if r.CachedTokens <= 0 {
		return
	}
	if p.hit == nil {
		p.hit = NewHist()
	}
	p.hit.Record(r.TTFTUS)
}

// summary compares the hits with ttft (every recorded TTFT); nil without
// a hit.
func (p *prefixCacheState) summary(ttft *Hist) *PrefixCacheSplit {
	if p.hit == nil || p.hit.Count() == 0 {
		return nil
	}
	s := &PrefixCacheSplit{Hits: p.hit.Count(), Misses: ttft.Count() - p.hit.Count(),
		HitTTFTP50MS: usToMS(p.hit.QuantileUS(0.5))}
	if s.Misses > 0 {
		s.MissTTFTP50MS = usToMS(minusMedianUS(ttft, p.hit))
	}
	return s
}

// minusMedianUS is the median of the values in all but not in part (part
// holds a subset of all's values): their bucket counts subtracted, exact
// at the histogram's resolution.
func minusMedianUS(all, part *Hist) int64 {
	a, b := all.h.Export(), part.h.Export()
	counts := make([]int64, len(a.Counts))
	for i, n := range a.Counts {
		counts[i] = n
		if i < len(b.Counts) {
			counts[i] -= b.Counts[i]
		}
	}
	rest := hdr.Import(&hdr.Snapshot{LowestTrackableValue: a.LowestTrackableValue,
		HighestTrackableValue: a.HighestTrackableValue, SignificantFigures: a.SignificantFigures, Counts: counts})
	return min(max(rest.ValueAtQuantile(50), all.min), all.max)
}
