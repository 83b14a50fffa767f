package analyze

import (
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// TestPrefixReuseHint: the prefix_reuse_low rule on summaries built on
// each side of each threshold (requests, requested share, ratio).
func TestPrefixReuseHint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string // what the row proves
		pr   *record.PrefixReuse
		want []string
		says string // in the message
	}{
		{"40% asked, 10% served: fires", &record.PrefixReuse{Requests: 100, RequestedShare: 0.4, AchievedShare: 0.1, CachedRequests: 30},
			[]string{"prefix_reuse_low"}, "reused 10% of prompt tokens where the workload asked for 40%"},
		{"just under half: fires", &record.PrefixReuse{Requests: 100, RequestedShare: 0.4, AchievedShare: 0.199, CachedRequests: 30},
			[]string{"prefix_reuse_low"}, "evicts blocks"},
		{"exactly half: no hint (bound excluded)", &record.PrefixReuse{Requests: 100, RequestedShare: 0.4, AchievedShare: 0.2, CachedRequests: 30}, nil, ""},
		{"served as asked: no hint", &record.PrefixReuse{Requests: 100, RequestedShare: 0.4, AchievedShare: 0.39, CachedRequests: 80}, nil, ""},
		{"19 requests are too few: no hint", &record.PrefixReuse{Requests: 19, RequestedShare: 0.4, AchievedShare: 0}, nil, ""},
		{"20 requests suffice: fires", &record.PrefixReuse{Requests: 20, RequestedShare: 0.4, AchievedShare: 0},
			[]string{"prefix_reuse_low"}, "reported no cached tokens"},
		{"9% asked is too little: no hint", &record.PrefixReuse{Requests: 100, RequestedShare: 0.09, AchievedShare: 0}, nil, ""},
		{"no reuse asked", nil, nil, ""},
	}
	for _, tt := range tests {
		s := &record.Summary{PrefixReuse: tt.pr}
		got, msg := hintRules(s)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: hints %v, want %v", tt.name, got, tt.want)
		}
		if !strings.Contains(msg, tt.says) {
			t.Errorf("%s: message %q lacks %q", tt.name, msg, tt.says)
		}
	}
}
