package experiment

import (
	"context"
	"testing"
	"time"

	"github.com/inferload/inferload/capacity"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
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
	cal, err := calibrate(out.Dir, base)
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

// calibrate fits base to the closed-loop run in dir as `inferload
// calibrate` does (the CLI's measuredRuns, which a test here cannot
// import).
func calibrate(dir string, base sim.Profile) (*capacity.Calibration, error) {
	p, err := summary.ReadPlan(dir)
	if err != nil {
		return nil, err
	}
	built, err := summary.Assemble(dir)
	if err != nil {
		return nil, err
	}
	run := capacity.MeasuredRun{Dir: dir, Summary: built.Summary, Users: p.Load.Concurrency,
		ThinkTime: p.Load.ThinkTime, Warmup: p.Load.Warmup}
	return capacity.Calibrate(capacity.CalibrateOptions{Runs: []capacity.MeasuredRun{run}, Base: base, Seed: 1})
}
