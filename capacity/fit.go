package capacity

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.yaml.in/yaml/v3"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// Fitting a profile to a measured server: the engine's cost model (step
// overhead, prefill per token, decode per sequence, KV read per token) is
// chosen so that simulating each measured load level of a closed-loop
// sweep, with the requests that level sent, gives back its throughput and
// its TTFT and TPOT percentiles. The simulation is the same engine the
// fleet planner replicates, so a fitted profile carries the measured
// server into `inferload fleet`.

// FitRequest is one measured request's lengths.
type FitRequest struct{ Prompt, Output int }

// FitStep is one measured closed-loop load level and what it delivered.
type FitStep struct {
	// Users ran with Think between a reply and the next request.
	Users int
	Think time.Duration
	// Warmup and Window are the level's discarded and measured time.
	Warmup, Window time.Duration
	// Requests are the level's requests, drawn with replacement when
	// simulating it (at least one).
	Requests []FitRequest
	// The measured figures: requests/s over the window and percentiles
	// of successful requests.
	Throughput                         float64
	TTFTP50, TTFTP99, TPOTP50, TPOTP99 time.Duration
	// TTFTP90 is checked against predictions, not fitted.
	TTFTP90 time.Duration
	// Batch is the mean running batch the server reported while the
	// level ran (its scraped running series); 0 when none was scraped,
	// and the fit takes the users, capped by the batch limit.
	Batch float64
	// Outstanding is the mean number of requests the client had out
	// while the level's measured window ran (every request's time out
	// clipped to the window, summed, over its length; not the measured
	// successful requests' latencies summed over the window); 0 when
	// not measured.
	Outstanding float64
}

// FitPrediction is a profile's simulation of one step.
type FitPrediction struct {
	Throughput                                  float64
	TTFTP50, TTFTP90, TTFTP99, TPOTP50, TPOTP99 time.Duration
	// MeanKVUsage is the time-averaged KV-cache use in the window;
	// MaxRunning the largest running batch seen; MaxStepTokens the most
	// tokens one step computed (prompt tokens and one per decode).
	MeanKVUsage   float64
	MaxRunning    int
	MaxStepTokens int
}

// FitResult is a fitted profile and how well it reproduces the steps.
type FitResult struct {
	Profile sim.Profile
	// Predictions are the fitted profile's figures per step, in order.
	Predictions []FitPrediction
	// Loss is the summed squared log error (fitLoss); Evals the
	// simulations of every step the search spent.
	Loss  float64
	Evals int
	// Unidentified names what the steps could not pin down, each kept
	// from the base profile, in words.
	Unidentified []string
}

// fitMaxEvals bounds the search: each evaluation simulates every step.
const fitMaxEvals = 160

// Fit searches the cost model that best reproduces steps, starting from
// base's and again from the line through the steps' TPOT against their
// batch (Nelder-Mead over the logarithms of the four costs). The batch,
// KV-cache and token-budget limits stay base's; Unidentified says when
// the data could not have told them anyway.
func Fit(base sim.Profile, steps []FitStep, seed uint64) (FitResult, error) {
	if err := checkFitSteps(steps); err != nil {
		return FitResult{}, err
	}
	base = base.WithDefaults()
	if err := base.Validate(); err != nil {
		return FitResult{}, fmt.Errorf("fit: base profile: %w", err)
	}
	evals := 0
	loss := func(x []float64) float64 {
		evals++
		preds, err := PredictSteps(withCosts(base, x), steps, seed)
		if err != nil {
			return math.Inf(1)
		}
		return fitLoss(steps, preds)
	}
	best, bestLoss := nelderMead(loss, costsOf(base), fitMaxEvals)
	// A second search starts from the line through the levels' TPOT
	// against their batch (seededCosts), and the better end is kept: a
	// CPU server's cost per sequence lies tens of times from a GPU-like
	// base's, farther than one search walks. On 1-thread llama.cpp
	// servers the search from cpu-small alone ended at a 60 to 104 ms
	// step and under 1.3 ms a sequence (a GPU's shape), the servers'
	// TPOT at one sequence up to tripled (TRUTH.md).
	if seeded, ok := seededCosts(base, steps); ok {
		if x, l := nelderMead(loss, costsOf(seeded), fitMaxEvals); l < bestLoss {
			best, bestLoss = x, l
		}
	}
	out := FitResult{Profile: withCosts(base, best), Loss: bestLoss, Evals: evals}
	preds, err := PredictSteps(out.Profile, steps, seed)
	if err != nil {
		return FitResult{}, err
	}
	out.Predictions = preds
	out.Unidentified = unidentified(out.Profile, steps, preds)
	return out, nil
}

// FitHeldOut checks a fit on load levels it did not see: for each step,
// the profile fitted to the others predicts it. It needs three steps or
// more (each fit needs two).
func FitHeldOut(base sim.Profile, steps []FitStep, seed uint64) ([]FitPrediction, error) {
	if len(steps) < 3 {
		return nil, fmt.Errorf("fit: %d load levels: holding one out needs at least 3", len(steps))
	}
	out := make([]FitPrediction, len(steps))
	for k := range steps {
		rest := append(slices.Clone(steps[:k]), steps[k+1:]...)
		res, err := Fit(base, rest, seed)
		if err != nil {
			return nil, err
		}
		p, err := PredictSteps(res.Profile, steps[k:k+1], seed+uint64(k))
		if err != nil {
			return nil, err
		}
		out[k] = p[0]
	}
	return out, nil
}

func checkFitSteps(steps []FitStep) error {
	if len(steps) < 2 {
		return fmt.Errorf("fit: %d load levels: need at least 2 (a sweep), since one level cannot separate a step's fixed cost from its per-sequence cost", len(steps))
	}
	for i, s := range steps {
		switch {
		case s.Users < 1 || len(s.Requests) == 0 || s.Window <= 0 || s.Warmup < 0 || s.Think < 0:
			return fmt.Errorf("fit: step %d: want users >= 1, requests, a window > 0 (got %d users, %d requests, window %s)", i+1, s.Users, len(s.Requests), s.Window)
		case !(s.Throughput > 0) || s.TTFTP50 <= 0 || s.TPOTP50 <= 0:
			return fmt.Errorf("fit: step %d (%d users): no throughput, TTFT or TPOT measured to fit", i+1, s.Users)
		}
	}
	return nil
}

// costsOf and withCosts map a profile's four costs to and from the
// search's coordinates (natural logs of nanoseconds).
func costsOf(p sim.Profile) []float64 {
	c := p.Cost
	l := func(d time.Duration) float64 { return math.Log(math.Max(float64(d), 1)) }
	return []float64{l(c.StepOverhead), l(c.PrefillPerToken), l(c.DecodePerSeq), l(c.KVReadPerToken)}
}

func withCosts(p sim.Profile, x []float64) sim.Profile {
	d := func(v float64) time.Duration { return time.Duration(math.Round(math.Exp(v))) }
	p.Cost.StepOverhead, p.Cost.PrefillPerToken, p.Cost.DecodePerSeq, p.Cost.KVReadPerToken = d(x[0]), d(x[1]), d(x[2]), d(x[3])
	return p
}

// fitLoss is the summed squared log error over the steps of throughput,
// TTFT P50 and TPOT P50, with the P99s at half weight: tails are noisier,
// and logs weigh a 10% miss the same at 50 ms and at 5 s.
func fitLoss(steps []FitStep, preds []FitPrediction) float64 {
	sq := func(got, want float64) float64 {
		e := math.Log(math.Max(got, 1e-9) / math.Max(want, 1e-9))
		return e * e
	}
	d := func(t time.Duration) float64 { return float64(t) }
	total := 0.0
	for i, s := range steps {
		p := preds[i]
		total += sq(p.Throughput, s.Throughput) + sq(d(p.TTFTP50), d(s.TTFTP50)) + sq(d(p.TPOTP50), d(s.TPOTP50))
		if s.TTFTP99 > 0 {
			total += 0.5 * sq(d(p.TTFTP99), d(s.TTFTP99))
		}
		if s.TPOTP99 > 0 {
			total += 0.5 * sq(d(p.TPOTP99), d(s.TPOTP99))
		}
	}
	return total
}

// PredictSteps simulates each step on one replica of p (virtual time) and
// returns its figures. The same seed draws the same requests, so two
// profiles are compared on identical traffic.
func PredictSteps(p sim.Profile, steps []FitStep, seed uint64) ([]FitPrediction, error) {
	out := make([]FitPrediction, len(steps))
	for i, s := range steps {
		pr, err := predictStep(p, s, seed+uint64(i))
		if err != nil {
			return nil, fmt.Errorf("step %d (%d users): %w", i+1, s.Users, err)
		}
		out[i] = pr
	}
	return out, nil
}

func predictStep(p sim.Profile, s FitStep, seed uint64) (FitPrediction, error) {
	// The same histograms the reference table uses (loopStats): HDR,
	// 3 significant digits, as the summaries being fitted are.
	hists := newLoopStats()
	ttft, tpot := hists.ttft, hists.tpot
	done := 0
	from, to := s.Warmup, s.Warmup+s.Window
	request := func(i uint64) FleetRequest {
		r := s.Requests[rand.New(rand.NewPCG(seed, i)).IntN(len(s.Requests))]
		return FleetRequest{PromptTokens: max(1, r.Prompt), OutputTokens: max(1, r.Output)}
	}
	think := func(*rand.Rand) time.Duration { return s.Think }
	var kv kvMeter
	_, err := RunFleet(FleetSpec{Profile: p, ReadyAt: []time.Duration{0}, Load: Load{Users: s.Users, Think: think, ThinkMean: s.Think},
		Request: request, Duration: to, Seed: seed, observe: kv.observe(from, to)},
		func(o *FleetOutcome) {
			if o.Err != nil || o.LastToken < from || o.LastToken >= to {
				return
			}
			done++
			firstUS := (o.FirstToken - o.Arrival).Microseconds()
			_ = ttft.RecordValue(firstUS)
			if us, ok := record.TPOTOf((o.LastToken - o.Arrival).Microseconds(), firstUS, o.Generated); ok {
				_ = tpot.RecordValue(us)
			}
		})
	if err != nil {
		return FitPrediction{}, err
	}
	q := func(h *hdrhistogram.Histogram, p float64) time.Duration {
		return time.Duration(h.ValueAtQuantile(p)) * time.Microsecond
	}
	return FitPrediction{Throughput: float64(done) / s.Window.Seconds(),
		TTFTP50: q(ttft, 50), TTFTP90: q(ttft, 90), TTFTP99: q(ttft, 99), TPOTP50: q(tpot, 50), TPOTP99: q(tpot, 99),
		MeanKVUsage: kv.mean(), MaxRunning: kv.maxRunning, MaxStepTokens: kv.maxStepTokens}, nil
}

// kvMeter time-averages a replica's KV-cache use over a window.
type kvMeter struct {
	weighted, span            float64
	maxRunning, maxStepTokens int
}

func (m *kvMeter) observe(from, to time.Duration) func(batchModel, *sim.StepResult) {
	return func(e batchModel, r *sim.StepResult) {
		if r.Start < from || r.Start >= to {
			return
		}
		d := r.Duration.Seconds()
		m.weighted += d * e.KVUsage()
		m.span += d
		m.maxRunning = max(m.maxRunning, e.Running())
		m.maxStepTokens = max(m.maxStepTokens, r.PrefillTokens+r.DecodeSeqs)
	}
}

func (m *kvMeter) mean() float64 {
	if m.span == 0 {
		return 0
	}
	return m.weighted / m.span
}

// unidentified says which limits the steps never reached, so the fitted
// profile keeps base's figure for them untested.
func unidentified(p sim.Profile, steps []FitStep, preds []FitPrediction) []string {
	var out []string
	kv, running, stepTokens, prompts := 0.0, 0, 0, map[int]bool{}
	for i, pr := range preds {
		kv, running, stepTokens = math.Max(kv, pr.MeanKVUsage), max(running, pr.MaxRunning), max(stepTokens, pr.MaxStepTokens)
		for _, r := range steps[i].Requests {
			prompts[r.Prompt] = true
		}
	}
	if kv < 0.9 {
		out = append(out, fmt.Sprintf("num_gpu_blocks: no step filled the KV cache (at most %.0f%% in use on average); the base's %d blocks are kept, untested", kv*100, p.NumGPUBlocks))
	}
	if running < p.MaxNumSeqs {
		out = append(out, fmt.Sprintf("max_num_seqs: no step ran more than %d sequences at once; the base's %d is kept, untested", running, p.MaxNumSeqs))
	}
	if stepTokens < p.MaxNumBatchedTokens {
		out = append(out, fmt.Sprintf("max_num_batched_tokens: no step computed more than %d tokens at once; the base's budget of %d is kept, untested", stepTokens, p.MaxNumBatchedTokens))
	}
	if b := batchUnidentified(steps, p.MaxNumSeqs); b != "" {
		out = append(out, b)
	}
	if len(prompts) < 2 {
		out = append(out, "prefill_per_token: every prompt had one length, so its cost and the step overhead are told apart only by the model's shape; sweep with mixed prompt lengths to pin it")
	}
	return out
}

// errNoSimplex guards nelderMead's input.
var errNoSimplex = errors.New("nelder-mead: no coordinates")

// nelderMead minimises f from x0 with the standard reflection, expansion,
// contraction and shrink steps (coefficients 1, 2, 0.5, 0.5), an initial
// simplex of x0 with each coordinate moved by ln 2 (the cost doubled), and
// at most maxEvals evaluations. Written here rather than imported: it is
// 60 lines, and the numeric libraries that have it weigh megabytes.
func nelderMead(f func([]float64) float64, x0 []float64, maxEvals int) ([]float64, float64) {
	n := len(x0)
	if n == 0 {
		panic(errNoSimplex)
	}
	type vertex struct {
		x []float64
		v float64
	}
	simplex := make([]vertex, n+1)
	simplex[0] = vertex{slices.Clone(x0), f(x0)}
	for i := range n {
		x := slices.Clone(x0)
		x[i] += math.Ln2
		simplex[i+1] = vertex{x, f(x)}
	}
	evals := n + 1
	along := func(c, x []float64, t float64) []float64 { // c + t(x - c)
		out := make([]float64, n)
		for i := range out {
			out[i] = c[i] + t*(x[i]-c[i])
		}
		return out
	}
	for evals < maxEvals {
		slices.SortFunc(simplex, func(a, b vertex) int { return cmp.Compare(a.v, b.v) })
		if simplex[n].v-simplex[0].v < 1e-6 {
			break
		}
		centroid := make([]float64, n)
		for _, s := range simplex[:n] {
			for i := range centroid {
				centroid[i] += s.x[i] / float64(n)
			}
		}
		worst := simplex[n]
		xr := along(centroid, worst.x, -1)
		vr := f(xr)
		evals++
		switch {
		case vr < simplex[0].v:
			xe := along(centroid, worst.x, -2)
			if ve := f(xe); ve < vr {
				simplex[n] = vertex{xe, ve}
			} else {
				simplex[n] = vertex{xr, vr}
			}
			evals++
		case vr < simplex[n-1].v:
			simplex[n] = vertex{xr, vr}
		default:
			xc := along(centroid, worst.x, 0.5)
			vc := f(xc)
			evals++
			if vc < worst.v {
				simplex[n] = vertex{xc, vc}
				continue
			}
			for k := 1; k <= n; k++ {
				x := along(simplex[0].x, simplex[k].x, 0.5)
				simplex[k] = vertex{x, f(x)}
				evals++
			}
		}
	}
	slices.SortFunc(simplex, func(a, b vertex) int { return cmp.Compare(a.v, b.v) })
	return simplex[0].x, simplex[0].v
}

// FittedYAML is p as a profile file `inferload sim --profile` and `fleet
// --profile` read: every field of the profile, so it loads whatever base it
// was fitted from (a preset, or a YAML file that is not beside it), with
// the base's name and the header lines as comments.
func FittedYAML(p sim.Profile, base string, header []string) ([]byte, error) {
	var b []byte
	for _, h := range header {
		b = append(b, "# "+h+"\n"...)
	}
	b = append(b, "# fitted from the base "+base+": its limits, with the costs fitted\n"...)
	body, err := yaml.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("fitted profile: %w", err)
	}
	return append(b, body...), nil
}
