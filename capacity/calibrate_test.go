package capacity

import (
	"strings"
	"testing"

	"github.com/inferload/inferload/sim"
)

// TestLearnBatchLimit: the rule that sets max_num_seqs from the scraped
// running batch, one row per case.
func TestLearnBatchLimit(t *testing.T) {
	t.Parallel()
	base := sim.Profile{MaxNumSeqs: 256}
	steps := []FitStep{{Users: 1}, {Users: 8}}
	full := batchRun(4, 3, 5, 5) // 4 running and 3 waiting in every one of 5 scrapes
	tests := []struct {
		name  string
		batch []batchSample
		want  int
		says  string
	}{
		{"full with a queue", full, 4, "learned"}, // 8 users offered, 4 ran, the rest waited: the limit
		{"between two figures", batchRun(3.6, 1, 4, 3), 4, "learned"},
		// The peak reached at a lower level too (2 users on 2 slots): its
		// scrapes show no queue and do not count; the top level's do.
		{"a lower level at the peak", append(lowerLevel(batchRun(2, 0, 20, 0)), batchRun(2, 2, 4, 4)...), 2, "learned"},
		{"queued in half the peak scrapes", batchRun(4, 1, 6, 3), 4, "learned"},
		{"queued in under half", batchRun(4, 1, 7, 3), 256, "in only 3 of the 7"},
		{"every user ran", batchRun(8, 0, 5, 0), 256, "at least"},
		{"no queue: a slow client", batchRun(3, 0, 5, 0), 256, "in only 0 of the 5"},
		// A batching server holds an arrival until its next step: one
		// waiting request now and then is no limit (the simulator on a
		// busy CI host: 5 of 6 users running, one waiting in 1 scrape).
		{"a transient wait", batchRun(5, 1, 6, 1), 256, "in only 1 of the 6"},
		{"too few scrapes with a queue", batchRun(4, 2, 2, 2), 256, "in only 2 of the 2"},
		{"queue only below the peak", append(batchRun(5, 0, 4, 0), batchRun(3, 2, 4, 4)...), 256, "in only 0 of the 4"},
		{"no waiting series", []batchSample{{running: 4}, {running: 4}, {running: 4}}, 256, "no waiting-queue series"},
		{"no running series", nil, 256, "no running-batch series"},
	}
	for _, tt := range tests {
		got, says := learnBatchLimit(base, steps, tt.batch)
		if got.MaxNumSeqs != tt.want || !strings.Contains(says, tt.says) {
			t.Errorf("%s: max_num_seqs %d (%q), want %d saying %q", tt.name, got.MaxNumSeqs, says, tt.want, tt.says)
		}
	}
}

// batchRun is n scrapes of running requests, of which the first queued
// also show waiting ones.
func batchRun(running, waiting float64, n, queued int) []batchSample {
	out := make([]batchSample, n)
	for i := range out {
		out[i] = batchSample{running: running, hasQueue: true, top: true}
		if i < queued {
			out[i].waiting = waiting
		}
	}
	return out
}

// lowerLevel marks scrapes as taken while a level below the top ran.
func lowerLevel(b []batchSample) []batchSample {
	for i := range b {
		b[i].top = false
	}
	return b
}
