package capacity

import (
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/sim"
)

// TestLearnBatchLimit: the rule that sets max_num_seqs from the scraped
// running batch, one row per case.
func TestLearnBatchLimit(t *testing.T) {
	t.Parallel()
	base := sim.Profile{MaxNumSeqs: 256}
	full := batchRun(4, 3, 5, 5) // 4 running and 3 waiting in every one of 5 scrapes
	tests := []struct {
		name  string
		batch []batchSample
		want  int
		says  string
		// outstanding is the top level's client-side mean outstanding
		// requests (0: not measured).
		outstanding float64
	}{
		{"full with a queue", full, 4, "learned", 0}, // 8 users offered, 4 ran, the rest waited: the limit
		{"between two figures", batchRun(3.6, 1, 4, 3), 4, "learned", 0},
		// The peak reached at a lower level too (2 users on 2 slots): its
		// scrapes show no queue and do not count; the top level's do.
		{"a lower level at the peak", append(lowerLevel(batchRun(2, 0, 20, 0)), batchRun(2, 2, 4, 4)...), 2, "learned", 0},
		{"queued in half the peak scrapes", batchRun(4, 1, 6, 3), 4, "learned", 0},
		{"queued in under half", batchRun(4, 1, 7, 3), 256, "in only 3 of the 7", 0},
		{"every user ran", batchRun(8, 0, 5, 0), 256, "at least", 0},
		{"no queue: a slow client", batchRun(3, 0, 5, 0), 256, "in only 0 of the 5", 0},
		// A batching server holds an arrival until its next step: one
		// waiting request now and then is no limit (the simulator on a
		// busy CI host: 5 of 6 users running, one waiting in 1 scrape).
		{"a transient wait", batchRun(5, 1, 6, 1), 256, "in only 1 of the 6", 0},
		{"too few scrapes with a queue", batchRun(4, 2, 2, 2), 256, "in only 2 of the 2", 0},
		{"queue only below the peak", append(batchRun(5, 0, 4, 0), batchRun(3, 2, 4, 4)...), 256, "in only 0 of the 4", 0},
		{"no waiting series", []batchSample{{running: 4}, {running: 4}, {running: 4}}, 256, "no waiting-queue series", 0},
		{"no running series", nil, 256, "no running-batch series", 0},
		// The client's own count: 8 users kept 7.9 out while the server
		// ran at most 4 (llama.cpp, whose requests_deferred misses the
		// waiters in its HTTP threads: a queue in 1 scrape of 7).
		{"held out by the client, queue unseen", batchRun(4, 1, 7, 1), 4, "kept 7.9 out", 7.9},
		{"held out, no waiting series", []batchSample{{running: 4, top: true}, {running: 4, top: true}, {running: 4, top: true}}, 4, "kept 7.9 out", 7.9},
		// Two scrapes of the top level may both miss its peak: not enough.
		{"held out, two scrapes", []batchSample{{running: 4, top: true}, {running: 4, top: true}}, 256, "no waiting-queue series", 7.9},
		// A slow client kept only a little more out than ran: no limit.
		{"a little more out than ran", batchRun(4, 0, 5, 0), 256, "in only 0 of the 5", 4.9},
		{"a quarter more but under one more", batchRun(2, 0, 5, 0), 256, "in only 0 of the 5", 2.9},
		{"a slow client, counted", batchRun(3, 0, 5, 0), 256, "in only 0 of the 5", 3.1},
	}
	for _, tt := range tests {
		steps := []FitStep{{Users: 1, Outstanding: 1}, {Users: 8, Outstanding: tt.outstanding}}
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

// TestSplitChecked: the levels named in CalibrateOptions.Check leave the
// fit, with their spans, so neither their figures nor their scrapes
// teach it anything; the rest keep their order.
func TestSplitChecked(t *testing.T) {
	t.Parallel()
	steps := []FitStep{{Users: 1}, {Users: 2}, {Users: 4}, {Users: 6}, {Users: 8}}
	spans := []levelSpan{{users: 1}, {users: 2}, {users: 4}, {users: 6}, {users: 8}}
	tests := []struct {
		name       string
		check      []int
		fit, apart []int
	}{
		{"nothing checked", nil, []int{1, 2, 4, 6, 8}, nil},
		{"below and above the slots", []int{2, 6}, []int{1, 4, 8}, []int{2, 6}},
		{"a level the sweep did not run", []int{3}, []int{1, 2, 4, 6, 8}, nil},
	}
	users := func(s []FitStep) (out []int) {
		for _, x := range s {
			out = append(out, x.Users)
		}
		return out
	}
	for _, tt := range tests {
		fit, fitSpans, apart := splitChecked(steps, spans, tt.check)
		if !slices.Equal(users(fit), tt.fit) || !slices.Equal(users(apart), tt.apart) || len(fitSpans) != len(fit) {
			t.Errorf("%s: fitted %v (%d spans), checked %v; want %v and %v", tt.name, users(fit), len(fitSpans), users(apart), tt.fit, tt.apart)
			continue
		}
		for i := range fit {
			if fitSpans[i].users != fit[i].Users {
				t.Errorf("%s: span %d is of %d users, its level of %d", tt.name, i, fitSpans[i].users, fit[i].Users)
			}
		}
	}
}

// TestMeanBatches: each level's Batch is the mean of the running batch
// scraped while it ran; a level without a scrape keeps 0 (the fit then
// takes its users, capped by the limit), and scrapes between levels
// count for none.
func TestMeanBatches(t *testing.T) {
	t.Parallel()
	steps := []FitStep{{Users: 1}, {Users: 8}, {Users: 16}}
	batch := []batchSample{{running: 1, level: 0}, {running: 3, level: 1}, {running: 4, level: 1}, {running: 5, level: 1}, {running: 7, level: -1}}
	meanBatches(steps, batch)
	for i, want := range []float64{1, 4, 0} {
		if steps[i].Batch != want {
			t.Errorf("level of %d users: batch %.2f, want %.2f", steps[i].Users, steps[i].Batch, want)
		}
	}
}
