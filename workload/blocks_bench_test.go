package workload

import (
	"runtime"
	"testing"
)

// BenchmarkSpecOfBlocks builds Mooncake-like prompts of 8 blocks of 512
// tokens, half shared with the request before and half new, so the block
// cache fills and then evicts as a long trace makes it; heap-MB is the
// live heap afterwards, which the cache bound keeps flat however many
// distinct blocks the requests named.
func BenchmarkSpecOfBlocks(b *testing.B) {
	cfg := GeneratorConfig{Seed: 1, Input: Fixed(8), Output: Fixed(4), Salt: "a1b2c3", BlockTokens: 512}
	g := mustGenerator(b, cfg)
	ids := make([]int64, 8)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for j := range ids {
			ids[j] = int64(4*i + j) // blocks 4i+4..4i+7 are next request's 0..3
		}
		g.SpecOfBlocks(uint64(i), 8*512, 4, ids)
	}
	b.StopTimer()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "heap-MB")
	b.ReportMetric(float64(g.blocks.cache.len()), "blocks-kept")
	runtime.KeepAlive(g)
}
