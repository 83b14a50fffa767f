package report

import (
	"testing"

	"github.com/inferload/inferload/record"
)

// TestDigestCountsAreSummaryCounts: the distributions draw the samples of
// summary.json's metrics and no others, since the digest takes record's
// rules (the measured successes, TTFT of streamed replies, every ITL gap)
// rather than its own: each distribution's bars add up to the metric's
// count, warm-up records, failures and non-streamed replies included in
// the input.
func TestDigestCountsAreSummaryCounts(t *testing.T) {
	t.Parallel()
	agg := record.NewAggregate()
	d := NewDigest()
	for _, r := range inputRecords() {
		agg.Add(r)
		d.Add(r)
	}
	m := agg.Summary(record.RunInfo{WarmupEndUS: 10e6, EndUS: 20e6}).Metrics
	sum := func(bins *[latencyBins]int64) int64 {
		var n int64
		for _, c := range bins {
			n += c
		}
		return n
	}
	for _, tt := range []struct {
		name string
		bins *[latencyBins]int64
		want int64
	}{
		{"TTFT", &d.ttft, m.TTFT.Count},
		{"ITL", &d.itl, m.ITL.Count},
		{"E2E", &d.e2e, m.E2E.Count},
	} {
		if got := sum(tt.bins); got != tt.want || got == 0 {
			t.Errorf("%s distribution holds %d samples, summary.json %d", tt.name, got, tt.want)
		}
	}
}
