package experiment

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/inferload/inferload/capacity"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/sim"
)

// CalibrateOptions fits a simulator profile to measured runs.
type CalibrateOptions struct {
	// Dirs are run directories of closed-loop runs against one server:
	// a sweep's steps each count as a load level, a single-phase run as
	// one.
	Dirs []string
	// Base is the profile whose limits (batch, KV cache, token budget)
	// the fit keeps and whose costs it starts from.
	Base sim.Profile
	// HeldOut also predicts each level from a fit of the others.
	HeldOut bool
	// Seed draws the simulated traffic.
	Seed uint64
}

// Calibration is a fitted profile and its evidence.
type Calibration struct {
	Profile sim.Profile
	Steps   []capacity.FitStep
	Fit     capacity.FitResult
	// HeldOut holds each level's prediction by a fit of the others; nil
	// unless asked for.
	HeldOut []capacity.FitPrediction
	// Learned says, for each limit, what the runs showed of it and what
	// the profile holds: learned from them, or kept from the base and why.
	Learned []string
}

// Calibrate reads the load levels of o.Dirs and fits the profile's costs
// to them (capacity.Fit). Each level's figures are its summary's, as
// `inferload report` computes them; its requests are its measured
// successful ones.
func Calibrate(o CalibrateOptions) (*Calibration, error) {
	var steps []capacity.FitStep
	peak := 0.0
	for _, dir := range o.Dirs {
		s, err := fitStepsOf(dir)
		if err != nil {
			return nil, err
		}
		steps = append(steps, s...)
		p, err := peakRunning(dir)
		if err != nil {
			return nil, err
		}
		peak = max(peak, p)
	}
	var learned string
	o.Base, learned = learnBatchLimit(o.Base, steps, peak)
	res, err := capacity.Fit(o.Base, steps, o.Seed)
	if err != nil {
		return nil, err
	}
	c := &Calibration{Profile: res.Profile, Steps: steps, Fit: res, Learned: []string{learned}}
	if o.HeldOut && len(steps) >= 3 {
		if c.HeldOut, err = capacity.FitHeldOut(o.Base, steps, o.Seed); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// fitStepsOf turns one run directory into load levels: its summary's
// steps (or the whole run), each with its measured requests.
func fitStepsOf(dir string) ([]capacity.FitStep, error) {
	p, err := readPlan(dir)
	if err != nil {
		return nil, err
	}
	if p.Load.OpenLoop() {
		return nil, fmt.Errorf("calibrate %s: an open-loop run; fit closed-loop runs (a sweep over --users), whose users the simulation can replay", dir)
	}
	think, err := schedule.ParseThinkTime(p.Load.ThinkTime)
	if err != nil {
		return nil, fmt.Errorf("calibrate %s: load.think_time: %w", dir, err)
	}
	built, err := Assemble(dir)
	if err != nil {
		return nil, err
	}
	s := built.Summary
	reqs := map[int][]capacity.FitRequest{}
	if _, err := rundir.ReadRecords(rundir.RecordsFile(dir), func(r *record.Result) error {
		if r.OK() && !r.Warmup && r.OutputTokens > 0 {
			reqs[r.Step] = append(reqs[r.Step], capacity.FitRequest{Prompt: r.InputTokens, Output: r.OutputTokens})
		}
		return nil
	}); err != nil {
		return nil, err
	}
	level := func(users float64, window float64, m record.Metrics, tp record.Throughput, rs []capacity.FitRequest) capacity.FitStep {
		return capacity.FitStep{Users: int(users), Think: think.Mean(), Warmup: p.Load.Warmup,
			Window: time.Duration(window * float64(time.Second)), Requests: rs, Throughput: tp.RequestsPerS,
			TTFTP50: msDuration(m.TTFT.P50), TTFTP99: msDuration(m.TTFT.P99),
			TPOTP50: msDuration(m.TPOT.P50), TPOTP99: msDuration(m.TPOT.P99)}
	}
	if len(s.Steps) == 0 {
		return []capacity.FitStep{level(float64(p.Load.Concurrency), s.WindowS, s.Metrics, s.Throughput, reqs[0])}, nil
	}
	var out []capacity.FitStep
	for _, st := range s.Steps {
		if st.Kind != record.StepConstant || st.Mode != record.ModeClosed {
			continue // a ramp has no one load to replay
		}
		if len(reqs[st.Index]) == 0 {
			return nil, fmt.Errorf("calibrate %s: step %d (%s) has no successful request to replay", dir, st.Index, record.LoadText(st.Target, st.Mode))
		}
		out = append(out, level(st.Target, st.WindowS, st.Metrics, st.Throughput, reqs[st.Index]))
	}
	if len(out) == 0 {
		return nil, errors.New("calibrate " + dir + ": no constant closed-loop step to fit")
	}
	return out, nil
}

// peakRunning is the most requests the server said it was running at
// once in dir's scraped telemetry (the running series: vLLM's
// num_requests_running, llama.cpp's requests_processing, ...), 0 when
// the run scraped none.
func peakRunning(dir string) (float64, error) {
	samples, err := rundir.ReadTelemetry(filepath.Join(dir, rundir.Telemetry))
	if err != nil {
		return 0, fmt.Errorf("calibrate %s: %w", dir, err)
	}
	peak := 0.0
	for _, s := range samples {
		if v, ok := s.Values[observe.RunningBatch]; ok && !s.Gap {
			peak = max(peak, v)
		}
	}
	return peak, nil
}

// learnBatchLimit sets base's max_num_seqs from what the server showed.
// Rule: when the scraped running batch peaked below the most users any
// level offered, the server could not run more at once (a closed-loop
// user always has a request out, bar think time), so the peak is its
// limit: llama.cpp's slots, vLLM's --max-num-seqs. When it reached the
// users offered, the limit is at least that and the base's stays; without
// a scraped running series nothing is learned. The sentence says which.
func learnBatchLimit(base sim.Profile, steps []capacity.FitStep, peak float64) (sim.Profile, string) {
	users := 0
	for _, s := range steps {
		users = max(users, s.Users)
	}
	switch n := int(math.Round(peak)); {
	case peak <= 0:
		return base, fmt.Sprintf("max_num_seqs %d kept from the base: the runs scraped no running-batch series (observe.scrape must reach the server's /metrics)", base.MaxNumSeqs)
	case n >= users:
		return base, fmt.Sprintf("max_num_seqs %d kept from the base: the server ran every request offered (up to %d at once), so its limit is at least %d", base.MaxNumSeqs, n, users)
	default:
		base.MaxNumSeqs = n
		return base, fmt.Sprintf("max_num_seqs %d learned: the server ran at most %d requests at once (scraped running batch) while up to %d users were offered", n, n, users)
	}
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
