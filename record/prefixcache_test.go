package record

import (
	"testing"
)

// TestPrefixCacheSplit: hits and misses are told apart by cached_tokens,
// the misses recorded before the first hit included, and each group's
// median TTFT is its own (within the histogram's 0.1%).
func TestPrefixCacheSplit(t *testing.T) {
	t.Parallel()
	var recs []Result
	for i := range 30 { // 10 misses first, then alternating hits and misses
		r := Result{ID: uint64(i), Stream: true, E2EUS: 900_000, OutputTokens: 2, TokenSource: TokensUsage,
			PromptTokensSent: 500, TTFTUS: 400_000 + int64(i)}
		if i >= 10 && i%2 == 0 {
			r.CachedTokens, r.TTFTUS = 256, 100_000+int64(i)
		}
		recs = append(recs, r)
	}
	s := summarize(closedInfo, recs)
	pc := s.PrefixCache
	if pc == nil || pc.Hits != 10 || pc.Misses != 20 {
		t.Fatalf("prefix_cache %+v, want 10 hits and 20 misses", pc)
	}
	near := func(got, want float64) bool { return got >= want && got <= want*1.001 }
	if !near(pc.HitTTFTP50MS, 100.018) || !near(pc.MissTTFTP50MS, 400.011) {
		t.Errorf("medians: hits %v ms (want ~100.018), misses %v ms (want ~400.011)", pc.HitTTFTP50MS, pc.MissTTFTP50MS)
	}
	var bucket *PrefixCacheSplit
	for _, b := range s.InputBuckets {
		if b.PrefixCache != nil {
			bucket = b.PrefixCache
		}
	}
	if bucket == nil || *bucket != *pc {
		t.Errorf("the one used bucket's split %+v, want the run's %+v", bucket, pc)
	}
	if none := summarize(closedInfo, recs[:10]); none.PrefixCache != nil {
		t.Errorf("no hit, yet prefix_cache %+v", none.PrefixCache)
	}
}
