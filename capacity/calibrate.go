package capacity

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/sim"
)

// MeasuredRun is one run directory as calibration reads it: its records
// and scraped telemetry (read from Dir), its summary as `inferload
// report` rebuilds it, and its plan's load. experiment's MeasuredRuns
// reads it; this package reads no plan and assembles no summary.
type MeasuredRun struct {
	Dir     string
	Summary *record.Summary
	// OpenLoop, Users (load.concurrency), ThinkTime (load.think_time, as
	// written) and Warmup (load.warmup) are the plan's load.
	OpenLoop  bool
	Users     int
	ThinkTime string
	Warmup    time.Duration
}

// CalibrateOptions fits a simulator profile to measured runs.
type CalibrateOptions struct {
	// Runs are closed-loop runs against one server: a sweep's steps each
	// count as a load level, a single-phase run as one.
	Runs []MeasuredRun
	// Base is the profile whose limits (batch, KV cache, token budget)
	// the fit keeps and whose costs it starts from.
	Base sim.Profile
	// HeldOut also predicts each level from a fit of the others.
	HeldOut bool
	// Check names load levels (users) left out of the fit altogether,
	// limits included, and predicted by it: the held-out check of a
	// profile fitted to a few levels of a sweep.
	Check []int
	// Seed draws the simulated traffic.
	Seed uint64
}

// Calibration is a fitted profile and its evidence.
type Calibration struct {
	Profile sim.Profile
	Steps   []FitStep
	Fit     FitResult
	// HeldOut holds each level's prediction by a fit of the others; nil
	// unless asked for.
	HeldOut []FitPrediction
	// Checked are the levels of CalibrateOptions.Check, with the fitted
	// profile's prediction of each (Predictions, in order).
	Checked     []FitStep
	Predictions []FitPrediction
	// Learned says, for each limit, what the runs showed of it and what
	// the profile holds: learned from them, or kept from the base and why.
	Learned []string
}

// Calibrate reads the load levels of o.Runs and fits the profile's costs
// to them (Fit): "calibrate" in inferload means this, a profile fitted to
// measured runs. Each level's figures are its summary's, as
// `inferload report` computes them; its requests are its measured
// successful ones.
func Calibrate(o CalibrateOptions) (*Calibration, error) {
	var steps []FitStep
	var spans []levelSpan
	for _, run := range o.Runs {
		s, sp, err := fitStepsOf(run)
		if err != nil {
			return nil, err
		}
		steps = append(steps, s...)
		spans = append(spans, sp...)
	}
	steps, spans, checked := splitChecked(steps, spans, o.Check)
	top := 0
	for _, s := range steps {
		top = max(top, s.Users)
	}
	var batch []batchSample
	for _, run := range o.Runs {
		b, err := batchSamples(run.Dir, spans, top, len(o.Check) > 0)
		if err != nil {
			return nil, err
		}
		batch = append(batch, b...)
	}
	var learned string
	o.Base, learned = learnBatchLimit(o.Base, steps, batch)
	meanBatches(steps, batch)
	res, err := Fit(o.Base, steps, o.Seed)
	if err != nil {
		return nil, err
	}
	c := &Calibration{Profile: res.Profile, Steps: steps, Fit: res, Learned: []string{learned}}
	if w := levelsDisagree(steps); w != "" {
		c.Learned = append(c.Learned, w)
	}
	if o.HeldOut && len(steps) >= 3 {
		if c.HeldOut, err = FitHeldOut(o.Base, steps, o.Seed); err != nil {
			return nil, err
		}
	}
	if len(checked) > 0 {
		c.Checked = checked
		if c.Predictions, err = PredictSteps(c.Profile, checked, o.Seed+uint64(len(steps))); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// splitChecked takes the levels whose users are in check out of steps
// and spans, returning them apart.
func splitChecked(steps []FitStep, spans []levelSpan, check []int) ([]FitStep, []levelSpan, []FitStep) {
	if len(check) == 0 {
		return steps, spans, nil
	}
	var fit, checked []FitStep
	var fitSpans []levelSpan
	for i, s := range steps {
		if slices.Contains(check, s.Users) {
			checked = append(checked, s)
			continue
		}
		fit = append(fit, s)
		fitSpans = append(fitSpans, spans[i])
	}
	return fit, fitSpans, checked
}

// levelSpan is when, on dir's run clock, a load level of users ran.
type levelSpan struct {
	dir          string
	users        int
	fromUS, toUS int64
}

// fitStepsOf turns one run directory into load levels: its summary's
// steps (or the whole run), each with its measured requests, and when
// each ran.
func fitStepsOf(run MeasuredRun) ([]FitStep, []levelSpan, error) {
	dir := run.Dir
	if run.OpenLoop {
		return nil, nil, fmt.Errorf("calibrate %s: an open-loop run; fit closed-loop runs (a sweep over --users), whose users the simulation can replay", dir)
	}
	think, err := schedule.ParseThinkTime(run.ThinkTime)
	if err != nil {
		return nil, nil, fmt.Errorf("calibrate %s: load.think_time: %w", dir, err)
	}
	s := run.Summary
	reqs := map[int][]FitRequest{}
	var out outstanding
	if _, err := rundir.ReadRecords(rundir.RecordsFile(dir), func(r *record.Result) error {
		if r.OK() && !r.Warmup && r.OutputTokens > 0 {
			reqs[r.Step] = append(reqs[r.Step], FitRequest{Prompt: r.InputTokens, Output: r.OutputTokens})
		}
		out.add(r)
		return nil
	}); err != nil {
		return nil, nil, err
	}
	warmupUS := run.Warmup.Microseconds()
	level := func(users float64, startS, window float64, m record.Metrics, tp record.Throughput, rs []FitRequest) FitStep {
		st := FitStep{Users: int(users), Think: think.Mean(), Warmup: run.Warmup,
			Window: time.Duration(window * float64(time.Second)), Requests: rs, Throughput: tp.RequestsPerS,
			TTFTP50: msDuration(m.TTFT.P50), TTFTP90: msDuration(m.TTFT.P90), TTFTP99: msDuration(m.TTFT.P99),
			TPOTP50: msDuration(m.TPOT.P50), TPOTP99: msDuration(m.TPOT.P99)}
		from := int64(startS*1e6) + warmupUS
		st.Outstanding = out.mean(from, from+int64(window*1e6))
		return st
	}
	if len(s.Steps) == 0 {
		whole := levelSpan{dir: dir, users: run.Users, toUS: math.MaxInt64}
		return []FitStep{level(float64(run.Users), 0, s.WindowS, s.Metrics, s.Throughput, reqs[0])}, []levelSpan{whole}, nil
	}
	var steps []FitStep
	var spans []levelSpan
	for _, st := range s.Steps {
		if st.Kind != record.StepConstant || st.Mode != record.ModeClosed {
			continue // a ramp has no one load to replay
		}
		if len(reqs[st.Index]) == 0 {
			return nil, nil, fmt.Errorf("calibrate %s: step %d (%s) has no successful request to replay", dir, st.Index, record.LoadText(st.Target, st.Mode))
		}
		steps = append(steps, level(st.Target, st.StartS, st.WindowS, st.Metrics, st.Throughput, reqs[st.Index]))
		// The level's measured window: after its warm-up, WindowS long.
		from := int64(st.StartS*1e6) + warmupUS
		spans = append(spans, levelSpan{dir: dir, users: int(st.Target), fromUS: from, toUS: from + int64(st.WindowS*1e6)})
	}
	if len(steps) == 0 {
		return nil, nil, errors.New("calibrate " + dir + ": no constant closed-loop step to fit")
	}
	return steps, spans, nil
}

// outstanding is when each request of a run was out, from its origin
// to its end, on the run clock.
type outstanding struct{ from, to []int64 }

func (o *outstanding) add(r *record.Result) {
	o.from = append(o.from, r.OriginUS())
	o.to = append(o.to, r.DoneUS())
}

// mean is how many requests the client had out on average over
// [fromUS, toUS): each request's time out clipped to the window, summed,
// over the window's length; 0 for an empty window. Requests of every
// kind and step count, warm-up ones too: all were out. Summing the
// measured requests' whole latencies instead (Little's law over them)
// counts the time the last ones spend past the window's end, which on a
// slow host came to 5.1 requests out at 4 closed-loop users.
func (o *outstanding) mean(fromUS, toUS int64) float64 {
	if toUS <= fromUS {
		return 0
	}
	var busy int64
	for k, f := range o.from {
		busy += max(min(o.to[k], toUS)-max(f, fromUS), 0)
	}
	return float64(busy) / float64(toUS-fromUS)
}

// batchSample is one scrape of what the server said it was doing: the
// requests in its running batch (vLLM's num_requests_running,
// llama.cpp's requests_processing, ...) and, where it exports one, the
// requests it held waiting (num_requests_waiting, requests_deferred).
type batchSample struct {
	running  float64
	waiting  float64
	hasQueue bool
	// top: scraped while the level with the most users ran.
	top bool
	// level is the index of the fitted level that ran when it was
	// scraped, -1 for none.
	level int
}

// meanBatches sets each step's Batch to the mean of the running batch
// scraped while it ran, where any was.
func meanBatches(steps []FitStep, batch []batchSample) {
	sum, n := make([]float64, len(steps)), make([]int, len(steps))
	for _, b := range batch {
		if b.level >= 0 {
			sum[b.level] += b.running
			n[b.level]++
		}
	}
	for i := range steps {
		if n[i] > 0 {
			steps[i].Batch = sum[i] / float64(n[i])
		}
	}
}

// batchSamples reads dir's scraped telemetry for the samples that carry a
// running batch, marking those scraped while a level of top users ran
// (spans); none when the run scraped none. With onlySpans, samples
// scraped outside every span (while a checked level ran) are left out.
func batchSamples(dir string, spans []levelSpan, top int, onlySpans bool) ([]batchSample, error) {
	samples, err := rundir.ReadTelemetry[observe.Sample](filepath.Join(dir, rundir.Telemetry))
	if err != nil {
		return nil, fmt.Errorf("calibrate %s: %w", dir, err)
	}
	var out []batchSample
	for _, s := range samples {
		v, ok := s.Values[observe.RunningBatch]
		if !ok || s.Gap {
			continue
		}
		q, hasQueue := s.Values[observe.QueueDepth]
		b := batchSample{running: v, waiting: q, hasQueue: hasQueue, level: -1}
		for i, sp := range spans {
			if sp.dir == dir && s.TimeUS >= sp.fromUS && s.TimeUS < sp.toUS {
				b.level, b.top = i, sp.users == top
			}
		}
		if b.level >= 0 || !onlySpans {
			out = append(out, b)
		}
	}
	return out, nil
}

// learnBatchLimit sets base's max_num_seqs from what the server showed.
//
// Rule: the limit is learned as n = the peak of the scraped running
// batch, rounded, only when (a) n is below the most users any level
// offered and (b) the client kept clearly more requests out than that
// while the level with the most users ran (heldOut; with at least
// minQueuedScrapes scrapes of that level, so the peak is seen), or the server itself
// said it was full at n, scrape after scrape, while that level ran: of its scrapes with a running batch
// within half a request of the peak, at least minQueuedScrapes and at
// least half also show requests waiting in its queue. A running peak
// below the users offered is no proof on its own: scrapes are instants
// that can miss the peak, and a slow or busy client keeps fewer requests
// out than it has users. Nor is a request waiting now and then: a
// batching server (vLLM, the simulator) holds an arrival in its queue
// until its next step even with room in the batch. A server at its
// limit keeps the surplus waiting, and the client's own count sees the
// surplus whether or not the server reports it. When the peak reached the users
// offered the limit is at least that; without a running or a waiting
// series, or when the queue was not persistent, the base's limit stays.
// The sentence says which.
func learnBatchLimit(base sim.Profile, steps []FitStep, batch []batchSample) (sim.Profile, string) {
	users, outstanding := 0, 0.0
	for _, s := range steps {
		if s.Users > users {
			users, outstanding = s.Users, s.Outstanding
		}
	}
	peak, queueSeries := 0.0, false
	for _, b := range batch {
		peak = max(peak, b.running)
		queueSeries = queueSeries || b.hasQueue
	}
	atPeak, queued, topScrapes := 0, 0, 0
	for _, b := range batch {
		if b.top {
			topScrapes++
		}
		if b.top && b.running >= peak-0.5 {
			atPeak++
			if b.waiting > 0 {
				queued++
			}
		}
	}
	kept := fmt.Sprintf("max_num_seqs %d kept from the base: ", base.MaxNumSeqs)
	switch n := int(math.Round(peak)); {
	case peak <= 0:
		return base, kept + "the runs scraped no running-batch series (observe.scrape must reach the server's /metrics)"
	case n >= users:
		return base, kept + fmt.Sprintf("the server ran every request offered (up to %d at once), so its limit is at least %d", n, users)
	case topScrapes >= minQueuedScrapes && heldOut(n, outstanding):
		// The client's own count: it kept the surplus out, so the server
		// held it somewhere it does not report (llama.cpp's HTTP threads:
		// its requests_deferred misses most of them).
		base.MaxNumSeqs = n
		return base, fmt.Sprintf("max_num_seqs %d learned: the server ran at most %d requests at once (scraped running batch) while the client kept %.1f out on average at %d users (its requests' time out within the level's measured window)", n, n, outstanding, users)
	case !queueSeries:
		return base, kept + fmt.Sprintf("the server ran at most %d requests at once while up to %d users were offered, but it exports no waiting-queue series to show it was full", n, users)
	case queued < minQueuedScrapes || 2*queued < atPeak:
		return base, kept + fmt.Sprintf("the server ran at most %d requests at once while up to %d users were offered, but requests waited in its queue in only %d of the %d scrapes at that peak while %d users ran (a full server keeps them waiting: at least %d scrapes and half of them), so the client offered fewer than its users", n, users, queued, atPeak, users, minQueuedScrapes)
	default:
		base.MaxNumSeqs = n
		return base, fmt.Sprintf("max_num_seqs %d learned: the server ran at most %d requests at once (scraped running batch) with requests waiting in its queue in %d of the %d scrapes at that peak while %d users ran", n, n, queued, atPeak, users)
	}
}

// heldOut reports whether the client kept clearly more requests out, on
// average over the top level's window, than the server ever ran at once
// (n): at least a quarter more and one more. Waiting at a batching
// server's next step, or time on the wire, adds a fraction of a request
// on average; a surplus that large waited for room the server did not
// have, whether or not it exports a queue that shows it.
func heldOut(n int, outstanding float64) bool {
	return outstanding >= 1.25*float64(n) && outstanding >= float64(n)+1
}

// minQueuedScrapes is how many scrapes at the running peak must show a
// queue before learnBatchLimit takes the peak for the server's limit.
const minQueuedScrapes = 3

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
