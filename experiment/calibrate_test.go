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
	full := []batchSample{{running: 4, waiting: 3, hasQueue: true}, {running: 2, hasQueue: true}}
	tests := []struct {
		name  string
		batch []batchSample
		want  int
		says  string
	}{
		{"full with a queue", full, 4, "learned"}, // 8 users offered, 4 ran, the rest waited: the limit
		{"between two figures", []batchSample{{running: 3.6, waiting: 1, hasQueue: true}}, 4, "learned"},
		{"queue just below the peak", []batchSample{{running: 4}, {running: 3.6, waiting: 2, hasQueue: true}}, 4, "learned"},
		{"every user ran", []batchSample{{running: 8, waiting: 0, hasQueue: true}}, 256, "at least"},
		{"no queue: a slow client", []batchSample{{running: 3, hasQueue: true}, {running: 2, hasQueue: true}}, 256, "no request waited"},
		{"queue only below the peak", []batchSample{{running: 5}, {running: 3, waiting: 2, hasQueue: true}}, 256, "no request waited"},
		{"no waiting series", []batchSample{{running: 4}}, 256, "no waiting-queue series"},
		{"no running series", nil, 256, "no running-batch series"},
	}
	for _, tt := range tests {
		got, says := learnBatchLimit(base, steps, tt.batch)
		if got.MaxNumSeqs != tt.want || !strings.Contains(says, tt.says) {
			t.Errorf("%s: max_num_seqs %d (%q), want %d saying %q", tt.name, got.MaxNumSeqs, says, tt.want, tt.says)
		}
	}
}
