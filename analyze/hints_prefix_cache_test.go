package analyze

import (
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// TestPrefixCacheHint: the prefix_cache_ttft rule on buckets built on each
// side of each threshold (share, milliseconds, samples per group).
func TestPrefixCacheHint(t *testing.T) {
	t.Parallel()
	bucket := func(label string, hits, misses int64, hit, miss float64) record.InputBucket {
		return record.InputBucket{Label: label, Breakdown: record.Breakdown{PrefixCache: &record.PrefixCacheSplit{
			Hits: hits, Misses: misses, HitTTFTP50MS: hit, MissTTFTP50MS: miss}}}
	}
	tests := []struct {
		name    string // what the row proves
		buckets []record.InputBucket
		want    []string
		label   string // the bucket the hint names
	}{
		{"hits 75% faster: fires", []record.InputBucket{bucket("<=1024", 100, 100, 100, 400)}, []string{"prefix_cache_ttft"}, "<=1024"},
		{"exactly 20% and 20 ms: fires (bounds included)", []record.InputBucket{bucket("<=256", 100, 100, 80, 100)}, []string{"prefix_cache_ttft"}, "<=256"},
		{"19% less: no hint", []record.InputBucket{bucket("<=256", 100, 100, 81, 100)}, nil, ""},
		{"50% less but 10 ms: no hint", []record.InputBucket{bucket("<=256", 100, 100, 10, 20)}, nil, ""},
		{"19 ms less at 95%: no hint", []record.InputBucket{bucket("<=256", 100, 100, 1, 20)}, nil, ""},
		{"4 hits cannot back a median: no hint", []record.InputBucket{bucket("<=1024", 4, 100, 100, 400)}, nil, ""},
		{"4 misses cannot back a median: no hint", []record.InputBucket{bucket("<=1024", 100, 4, 100, 400)}, nil, ""},
		{"5 of each back it: fires", []record.InputBucket{bucket("<=1024", 5, 5, 100, 400)}, []string{"prefix_cache_ttft"}, "<=1024"},
		{"hits slower (cache thrash): no hint", []record.InputBucket{bucket("<=1024", 100, 100, 500, 400)}, nil, ""},
		{"the largest saving is named", []record.InputBucket{bucket("<=256", 100, 100, 20, 60), bucket("<=4096", 100, 100, 300, 1500)}, []string{"prefix_cache_ttft"}, "<=4096"},
		{"no hit at all", []record.InputBucket{{Label: "<=256"}}, nil, ""},
	}
	for _, tt := range tests {
		s := &record.Summary{InputBuckets: tt.buckets}
		got, msg := hintRules(s)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: hints %v, want %v", tt.name, got, tt.want)
		}
		if tt.label != "" && !strings.Contains(msg, "prompts of "+tt.label+" tokens") {
			t.Errorf("%s: message %q does not name bucket %s", tt.name, msg, tt.label)
		}
	}
}
