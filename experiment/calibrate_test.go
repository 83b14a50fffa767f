package experiment

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/capacity"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// TestCalibrateASweep: a real sweep of the simulator (tiny, 10 ms step
// overhead, over HTTP) is calibrated from a base whose costs are doubled
// and halved: the fit comes back near the server's overhead (within 2x:
// real time adds the client's and the network's share) and reproduces
// each level's throughput within 25%.
func TestCalibrateASweep(t *testing.T) {
	t.Parallel()
	url := smallSim(t, 64)
	p := testPlan(t, "name: cal\ntarget: {url: "+url+", model: tiny-sim}\nworkload: {input_tokens: \"64\", output_tokens: \"16\"}\nload:\n  concurrency: 1\n  warmup: 500ms\n  grace: 5s\n")
	out, err := Sweep(context.Background(), p, Options{}, SweepOptions{Mode: record.ModeClosed, Loads: []float64{4, 12},
		StepDuration: 4 * time.Second, Stage: StageOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	truth, _ := sim.LookupProfile("tiny")
	truth.MaxNumSeqs, truth.Cost.StepOverhead = 64, 10*time.Millisecond
	base := truth
	base.Cost.StepOverhead *= 2
	base.Cost.PrefillPerToken /= 2
	cal, err := Calibrate(CalibrateOptions{Dirs: []string{out.Dir}, Base: base, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Steps) != 3 {
		t.Fatalf("%d load levels, want 3 (the 1-user baseline, 4 and 12 users)", len(cal.Steps))
	}
	got := cal.Profile.Cost.StepOverhead
	t.Logf("fitted %+v; loss %.4f", cal.Profile.Cost, cal.Fit.Loss)
	if got < 5*time.Millisecond || got > 20*time.Millisecond {
		t.Errorf("fitted step overhead %s, the server's is 10ms: want within 2x", got)
	}
	for i, s := range cal.Steps {
		pr := cal.Fit.Predictions[i]
		t.Logf("%d users: %.2f req/s measured, %.2f fitted", s.Users, s.Throughput, pr.Throughput)
		if relErrF(pr.Throughput, s.Throughput) > 0.25 {
			t.Errorf("%d users: fitted %.2f req/s, measured %.2f: want within 25%%", s.Users, pr.Throughput, s.Throughput)
		}
	}
}

func relErrF(got, want float64) float64 {
	if want == 0 {
		return got
	}
	d := (got - want) / want
	if d < 0 {
		return -d
	}
	return d
}

// TestLearnBatchLimit: the rule that sets max_num_seqs from the scraped
// running batch, one row per case.
func TestLearnBatchLimit(t *testing.T) {
	t.Parallel()
	base := sim.Profile{MaxNumSeqs: 256}
	steps := []capacity.FitStep{{Users: 1}, {Users: 8}}
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
