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

// TestCalibrateASweep: calibrate reads a real sweep of the simulator
// over HTTP (tiny, 10 ms step overhead) as `inferload calibrate` does:
// one load level per step, each with the users it ran and the throughput
// its summary measured, and a fitted profile with a prediction per level.
// How close the fit comes depends on how the host stretched the
// simulator and the client (CI saw the 1-user level off by 29%), so fit
// accuracy is tested on virtual time (TestVirtualCalibrateASweep).
func TestCalibrateASweep(t *testing.T) {
	t.Parallel()
	url := smallSim(t, 64)
	p := testPlan(t, "name: cal\ntarget: {url: "+url+", model: tiny-sim}\nworkload: {input_tokens: \"64\", output_tokens: \"16\"}\nload:\n  concurrency: 1\n  warmup: 500ms\n  grace: 5s\n")
	out, err := Sweep(context.Background(), p, Options{}, SweepOptions{Mode: record.ModeClosed, Loads: []float64{4, 12},
		StepDuration: 2 * time.Second, Stage: StageOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := sim.LookupProfile("tiny")
	base.MaxNumSeqs, base.Cost.StepOverhead = 64, 20*time.Millisecond
	cal, err := calibrate(out.Dir, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Steps) != 3 || len(cal.Fit.Predictions) != 3 {
		t.Fatalf("%d load levels, %d predictions; want 3 (the 1-user baseline, 4 and 12 users)", len(cal.Steps), len(cal.Fit.Predictions))
	}
	t.Logf("fitted %+v; loss %.4f", cal.Profile.Cost, cal.Fit.Loss)
	for i, s := range cal.Steps {
		st := out.Summary.Steps[i]
		if s.Users != int(st.Target) || s.Throughput != st.Throughput.RequestsPerS {
			t.Errorf("level %d: %d users at %.2f req/s; the sweep's step ran %v users at %.2f", i, s.Users, s.Throughput, st.Target, st.Throughput.RequestsPerS)
		}
	}
	if cal.Profile.Cost.StepOverhead <= 0 {
		t.Errorf("fitted %+v: want a step overhead", cal.Profile.Cost)
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
