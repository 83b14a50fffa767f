package capacity

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/workload"
)

// MixItem is one length in a weighted mix.
type MixItem struct {
	Tokens int     // the length
	Weight float64 // relative weight, > 0
}

// Mix is a weighted choice of lengths, e.g. prompts of 128/512/2048 tokens
// weighted 7:2:1.
type Mix []MixItem

func (m Mix) validate(name string) error {
	if len(m) == 0 {
		return fmt.Errorf("%s mix is empty", name)
	}
	for _, it := range m {
		if it.Tokens < 1 || it.Weight <= 0 {
			return fmt.Errorf("%s mix: want tokens >= 1 and weight > 0, got %d and %g", name, it.Tokens, it.Weight)
		}
	}
	return nil
}

// dist is the mix as workload's weighted choice of lengths, which draws
// it: one rule for a length mix, here and in a plan's "buckets(...)".
func (m Mix) dist() (workload.Dist, error) {
	lengths, weights := make([]int, len(m)), make([]float64, len(m))
	for i, it := range m {
		lengths[i], weights[i] = it.Tokens, it.Weight
	}
	return workload.Buckets(lengths, weights)
}

// String renders the mix as "128×7 512×2 2048×1" (tokens×weight).
func (m Mix) String() string {
	parts := make([]string, len(m))
	for i, it := range m {
		parts[i] = fmt.Sprintf("%d×%g", it.Tokens, it.Weight)
	}
	return strings.Join(parts, " ")
}

// ReferencePoint is a published measurement to print beside a simulated
// row.
type ReferencePoint struct {
	// Concurrency is the number of users the figures were measured at.
	Concurrency int
	// Throughput in requests per second.
	Throughput float64
	// TTFTP95 and PerTokenP95 are the published 95th percentiles.
	TTFTP95, PerTokenP95 time.Duration
}

// ReferenceSpec is a closed-loop experiment run on virtual time: for each
// concurrency, that many users each send a request, wait for its last
// token, and send the next at once (no think time). Every user sends its
// first request at time 0, so a run opens with a burst of arrivals.
type ReferenceSpec struct {
	// Profile is the engine to run.
	Profile sim.Profile
	// Concurrency lists the numbers of users, one row each.
	Concurrency []int
	// Prompts and Outputs are drawn independently for every request.
	// Outputs are exact lengths, as with ignore_eos.
	Prompts, Outputs Mix
	// Warmup is simulated time excluded from the figures; Duration is
	// the measured window after it. With no warm-up the opening burst
	// counts, as it does in a load test measured from its start.
	Warmup, Duration time.Duration
	// Seed drives the length draws.
	Seed uint64
	// Reference holds published figures to compare against, if any.
	Reference []ReferencePoint
}

// DefaultReference is the experiment docs/sim.md reports for the
// default "a100-7b" profile: prompts of 128/512/2048 tokens mixed 7:2:1,
// outputs of 128 and 512 tokens mixed 1:1, 50 to 200 users, beside the
// published vLLM 0.4 figures for a 7B model on one A100-80G. Like a
// benchmark run per concurrency level, all users start together and the
// first two minutes are measured, opening burst included; docs/sim.md
// explains why that, not a warmed-up steady state, is what the published
// figures show.
func DefaultReference() ReferenceSpec {
	p, _ := sim.LookupProfile(sim.DefaultProfile)
	return ReferenceSpec{
		Profile:     p,
		Concurrency: []int{50, 100, 150, 200},
		Prompts:     Mix{{128, 7}, {512, 2}, {2048, 1}},
		Outputs:     Mix{{128, 1}, {512, 1}},
		Warmup:      0,
		Duration:    2 * time.Minute,
		Seed:        1,
		Reference: []ReferencePoint{
			{50, 3.8, 800 * time.Millisecond, 45 * time.Millisecond},
			{100, 6.9, 1400 * time.Millisecond, 48 * time.Millisecond},
			{150, 7.2, 3900 * time.Millisecond, 52 * time.Millisecond},
			{200, 6.1, 8600 * time.Millisecond, 66 * time.Millisecond},
		},
	}
}

// WithProfile returns the spec run against p instead. The published
// reference figures belong to the spec's own profile, so they are dropped
// when p is a different one.
func (s ReferenceSpec) WithProfile(p sim.Profile) ReferenceSpec {
	if p.Name != s.Profile.Name {
		s.Reference = nil
	}
	s.Profile = p
	return s
}

// ReferenceRow is the outcome at one concurrency. TTFT runs from
// submission (queueing included) to the first token; TPOT is a request's
// (E2E − TTFT) / (output tokens − 1); ITL is every gap between tokens.
type ReferenceRow struct {
	Concurrency int // users
	Completed   int // requests finished in the measured window
	// Throughput and OutputTokensPerS are per second of the window.
	Throughput, OutputTokensPerS float64
	// Percentiles of the requests finished in the window.
	TTFTP50, TTFTP95, TPOTP50, TPOTP95, ITLP95, E2EP95 time.Duration
	// MeanRunning, MeanWaiting and MeanKVUsage are time averages.
	MeanRunning, MeanWaiting, MeanKVUsage float64
	// Preemptions in the window.
	Preemptions int64
	// PrefillRecomputed is the share of prefill tokens spent recomputing
	// preempted sequences.
	PrefillRecomputed float64
	// Reference is the published row for this concurrency, if any.
	Reference *ReferencePoint
}

// ReferenceTable is Reference's result; String renders it as Markdown.
type ReferenceTable struct {
	Profile string         // the profile's name
	Spec    ReferenceSpec  // what was run
	Rows    []ReferenceRow // one per concurrency, in the spec's order
}

// Reference runs spec on virtual time (no sleeping, no HTTP): minutes of
// simulated load take well under a second per concurrency level.
func Reference(spec ReferenceSpec) (ReferenceTable, error) {
	if err := spec.validate(); err != nil {
		return ReferenceTable{}, fmt.Errorf("reference table: %w", err)
	}
	t := ReferenceTable{Profile: spec.Profile.Name, Spec: spec}
	for _, users := range spec.Concurrency {
		row, err := runClosedLoop(spec, users)
		if err != nil {
			return ReferenceTable{}, fmt.Errorf("reference table, %d users: %w", users, err)
		}
		for i := range spec.Reference {
			if spec.Reference[i].Concurrency == users {
				row.Reference = &spec.Reference[i]
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

func (s ReferenceSpec) validate() error {
	if len(s.Concurrency) == 0 {
		return errors.New("no concurrency levels")
	}
	for _, c := range s.Concurrency {
		if c < 1 {
			return fmt.Errorf("concurrency must be >= 1, got %d", c)
		}
	}
	if s.Duration <= 0 || s.Warmup < 0 {
		return fmt.Errorf("need duration > 0 and warmup >= 0, got %s and %s", s.Duration, s.Warmup)
	}
	if err := s.Prompts.validate("prompt"); err != nil {
		return err
	}
	return s.Outputs.validate("output")
}

// loopStats accumulates one closed-loop run's measured window.
type loopStats struct {
	ttft, tpot, itl, e2e       *hdrhistogram.Histogram
	completed, outTokens       int
	running, waiting, kv, busy float64
	startCounters              sim.EngineCounters
}

func newLoopStats() *loopStats {
	h := func() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3) }
	return &loopStats{ttft: h(), tpot: h(), itl: h(), e2e: h()}
}

func (l *loopStats) step(r *sim.StepResult, e batchModel) {
	d := r.Duration.Seconds()
	l.busy += d
	l.running += d * float64(e.Running())
	l.waiting += d * float64(e.Waiting())
	l.kv += d * e.KVUsage()
	for _, ev := range r.Tokens {
		if !ev.First {
			_ = l.itl.RecordValue(ev.Gap.Microseconds())
		}
	}
}

func (l *loopStats) finish(s *sim.Sequence) {
	ttft, e2e := (s.FirstToken() - s.Arrival()).Microseconds(), (s.LastToken() - s.Arrival()).Microseconds()
	_ = l.ttft.RecordValue(ttft)
	_ = l.e2e.RecordValue(e2e)
	// A simulated stream ends with its last token.
	if tpot, ok := record.TPOTOf(e2e, ttft, s.Generated()); ok {
		_ = l.tpot.RecordValue(tpot)
	}
	l.completed++
	l.outTokens += s.Generated()
}

// runClosedLoop runs one row: users that resubmit the moment a request
// ends, as a benchmark client does, so the next request joins the very
// next step. It is not RunFleet with zero think time on purpose: the
// fleet starts a replica's next step before an arrival at the same
// instant (the request joins the step after), which is the fleet's and
// the fit's model; one loop for both would change either the reference
// table docs/sim.md compares with published figures, or every fleet and
// fitted figure.
func runClosedLoop(spec ReferenceSpec, users int) (ReferenceRow, error) {
	eng, err := newBatchModel(spec.Profile)
	if err != nil {
		return ReferenceRow{}, err
	}
	prompts, err := spec.Prompts.dist()
	if err != nil {
		return ReferenceRow{}, err
	}
	outputs, err := spec.Outputs.dist()
	if err != nil {
		return ReferenceRow{}, err
	}
	rng := rand.New(rand.NewPCG(spec.Seed, uint64(users)))
	block := spec.Profile.WithDefaults().BlockSize // the engine's, defaults filled in
	submit := func(now time.Duration) error {
		prompt, out := prompts.Sample(rng), outputs.Sample(rng)
		_, err := eng.Add(sim.Request{PromptTokens: prompt, OutputTokens: out, BlockHashes: uniqueHashes(rng, prompt/block)}, now)
		return err
	}
	for range users {
		if err := submit(0); err != nil {
			return ReferenceRow{}, err
		}
	}
	stats := newLoopStats()
	end := spec.Warmup + spec.Duration
	for now, measuring := time.Duration(0), false; now < end && eng.HasWork(); {
		if !measuring && now >= spec.Warmup {
			measuring, stats.startCounters = true, eng.Counters()
		}
		r := eng.Step(now)
		if measuring {
			stats.step(r, eng)
		}
		now = r.End()
		for _, ev := range r.Tokens {
			if !ev.Final {
				continue
			}
			if measuring {
				stats.finish(ev.Seq)
			}
			if err := submit(now); err != nil {
				return ReferenceRow{}, err
			}
		}
	}
	return stats.row(users, spec.Duration, eng.Counters()), nil
}

// uniqueHashes gives a prompt block hashes no other prompt shares, so
// prefix caching only helps a preempted request find its own blocks.
func uniqueHashes(r *rand.Rand, n int) []uint64 {
	h := make([]uint64, n)
	for i := range h {
		h[i] = r.Uint64() | 1
	}
	return h
}

func (l *loopStats) row(users int, window time.Duration, end sim.EngineCounters) ReferenceRow {
	us := func(h *hdrhistogram.Histogram, q float64) time.Duration {
		return time.Duration(h.ValueAtQuantile(q)) * time.Microsecond
	}
	secs := window.Seconds()
	row := ReferenceRow{
		Concurrency:      users,
		Completed:        l.completed,
		Throughput:       float64(l.completed) / secs,
		OutputTokensPerS: float64(l.outTokens) / secs,
		TTFTP50:          us(l.ttft, 50),
		TTFTP95:          us(l.ttft, 95),
		TPOTP50:          us(l.tpot, 50),
		TPOTP95:          us(l.tpot, 95),
		ITLP95:           us(l.itl, 95),
		E2EP95:           us(l.e2e, 95),
		Preemptions:      end.Preemptions - l.startCounters.Preemptions,
	}
	if l.busy > 0 {
		row.MeanRunning, row.MeanWaiting, row.MeanKVUsage = l.running/l.busy, l.waiting/l.busy, l.kv/l.busy
	}
	if prefill := end.PrefillTokens - l.startCounters.PrefillTokens; prefill > 0 {
		row.PrefillRecomputed = float64(end.RecomputedTokens-l.startCounters.RecomputedTokens) / float64(prefill)
	}
	return row
}

// String renders the table in Markdown, published figures in brackets
// beside the simulated ones when the spec carries them.
func (t ReferenceTable) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "profile %s; prompts %s; outputs %s; %s measured after %s warm-up (virtual time)\n\n",
		t.Profile, t.Spec.Prompts, t.Spec.Outputs, t.Spec.Duration, t.Spec.Warmup)
	rows := [][]string{{"users", "req/s (pub)", "TTFT P95 (pub)", "TPOT P95 (pub)", "ITL P95", "E2E P95",
		"running", "waiting", "KV use", "preempted", "recomputed"}}
	for _, r := range t.Rows {
		rows = append(rows, []string{
			fmt.Sprint(r.Concurrency),
			fmt.Sprintf("%.2f (%s)", r.Throughput, r.refThroughput()),
			fmt.Sprintf("%s (%s)", fmtSeconds(r.TTFTP95), r.refTTFT()),
			fmt.Sprintf("%s (%s)", fmtMillis(r.TPOTP95), r.refPerToken()),
			fmtMillis(r.ITLP95), fmtSeconds(r.E2EP95),
			fmt.Sprintf("%.0f", r.MeanRunning), fmt.Sprintf("%.0f", r.MeanWaiting),
			fmt.Sprintf("%.0f%%", 100*r.MeanKVUsage), fmt.Sprint(r.Preemptions),
			fmt.Sprintf("%.0f%%", 100*r.PrefillRecomputed),
		})
	}
	writeMarkdownTable(&b, rows)
	return b.String()
}

// writeMarkdownTable writes rows (the first is the header) with padded
// columns, so the table reads well in a terminal as well as rendered.
func writeMarkdownTable(b *strings.Builder, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			width[i] = max(width[i], utf8.RuneCountInString(cell))
		}
	}
	line := func(cells []string) {
		for i, cell := range cells {
			fmt.Fprintf(b, "| %s%s ", cell, strings.Repeat(" ", width[i]-utf8.RuneCountInString(cell)))
		}
		b.WriteString("|\n")
	}
	line(rows[0])
	sep := make([]string, len(width))
	for i, w := range width {
		sep[i] = strings.Repeat("-", w)
	}
	line(sep)
	for _, row := range rows[1:] {
		line(row)
	}
}

func (r ReferenceRow) refThroughput() string {
	if r.Reference == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f", r.Reference.Throughput)
}

func (r ReferenceRow) refTTFT() string {
	if r.Reference == nil {
		return "–"
	}
	return fmtSeconds(r.Reference.TTFTP95)
}

func (r ReferenceRow) refPerToken() string {
	if r.Reference == nil {
		return "–"
	}
	return fmtMillis(r.Reference.PerTokenP95)
}

func fmtSeconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func fmtMillis(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
