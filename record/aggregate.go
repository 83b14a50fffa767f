package record

import (
	"math"
	"time"
)

// Run modes, as RunInfo.Mode and summary.json's mode.
const (
	ModeClosed = "closed"
	ModeOpen   = "open"
)

// RunInfo is what a summary needs to know about the run beyond its records.
type RunInfo struct {
	Name string
	// Started is the UTC wall time of the run clock's zero.
	Started time.Time
	// Mode is ModeClosed or ModeOpen.
	Mode string
	// WarmupEndUS starts the measured window on the run clock.
	WarmupEndUS int64
	// MeasureEndUS is when issuing stopped: the measured window is
	// [WarmupEndUS, MeasureEndUS], the time load was offered. 0 means
	// unknown, and the window falls back to ending at EndUS.
	MeasureEndUS int64
	// EndUS is the run_end instant (the last request finished or the
	// grace ran out); 0 means unknown (a killed run), and the latest
	// completion among the records is used instead.
	EndUS       int64
	Interrupted bool
}

// Apply fills the fields an annotation carries: run_start's wall time,
// warmup_end, run_end and interrupted. Feeding it every line of events.jsonl
// rebuilds what the live run knew; Name and Mode come from the plan.
func (ri *RunInfo) Apply(e *Event) {
	switch e.Kind {
	case EventRunStart:
		if t, err := time.Parse(time.RFC3339Nano, e.Message); err == nil {
			ri.Started = t.UTC()
		}
	case EventWarmupEnd:
		ri.WarmupEndUS = e.TimeUS
	case EventMeasureEnd:
		ri.MeasureEndUS = e.TimeUS
	case EventRunEnd:
		ri.EndUS = e.TimeUS
	case EventInterrupted:
		ri.Interrupted = true
	}
}

// Aggregate folds records into the figures of a Summary. It is not safe for
// concurrent use: the caller serialises Add. Nothing it computes depends on
// the order records are added in.
type Aggregate struct {
	ttft, itl, tpot, e2e, queue, failedE2E *Hist

	succeeded, failed, late, openLoop int64
	clientFailed                      int64 // ErrClientResource: not the target's
	warmup, warmupFailed              int64
	errors                            map[ErrorKind]int64
	// rejected counts measured expected rejections: bad input refused
	// with a 4xx, a pass that is neither a success nor a failure.
	rejected int64

	inTok, outTok, reasoningTok int64
	usage, counted, nonStream   int64
	implausible                 int64 // usage counts the replies cannot have
	// checks compare token counts with what was asked (checks.go).
	checks tokenChecks

	lastDoneUS int64
	delivered  throughputMeter
	load       loadMeter

	// split holds the per-class and per-input-length sub-aggregates
	// (breakdown.go); child marks a sub-aggregate, which has none.
	split breakdowns
	child bool

	// slo judges goodput (goodput.go); compute estimates FLOPs (flops.go).
	slo     sloState
	compute computeState
	// retry counts attempts and retries (retry.go).
	retry retryState
	// chains holds the per-step figures of chain classes (chain.go).
	chains chainState
	// sessions folds conversations (session.go).
	sessions sessionState
	// server is where the time went by the server's account (servertime.go).
	server serverTimeState
	// cache splits TTFT by prefix-cache hit (prefixcache.go).
	cache prefixCacheState
	// reuse sets requested prefix reuse against achieved (prefixreuse.go).
	reuse prefixReuseState
	// reads holds the clocks and read lags (clientreads.go).
	reads readState
	conns connState
	// reasoning holds the per-channel figures (reasoning.go).
	reasoning reasoningState
	// accuracy counts the graded replies (grading.go).
	accuracy accuracyState
}

// NewAggregate returns an empty aggregate.
func NewAggregate() *Aggregate {
	return &Aggregate{
		ttft: NewHist(), itl: NewHist(), tpot: NewHist(), e2e: NewHist(),
		queue: NewHist(), failedE2E: NewHist(),
		errors: make(map[ErrorKind]int64),
	}
}

// Add folds one record in. Warm-up records are only counted; failures feed
// only the failed-E2E histogram and the error counts; successes feed every
// latency histogram and the token totals (docs/metrics.md has the rules).
func (a *Aggregate) Add(r *Result) {
	a.addBreakdowns(r)
	met := a.addGoodput(r)
	if !a.child {
		a.sessions.add(r, met) // warm-up too: it tells which conversations to leave out
	}
	a.addCompute(r)
	a.lastDoneUS = max(a.lastDoneUS, r.DoneUS())
	a.load.add(r)
	a.conns.add(r)
	if r.OK() {
		a.delivered.add(r)
	}
	if r.Warmup {
		a.warmup++
		if !r.OK() && !r.ExpectedRejection() {
			a.warmupFailed++
		}
		return
	}
	a.retry.add(r)
	if !a.child {
		slo := a.slo.table.For(r.Class)
		a.chains.add(r, slo, a.slo.table != nil && slo.Bounded())
	}
	if r.OpenLoop {
		a.openLoop++
	}
	if r.Late {
		a.late++
	}
	if !r.MeasuredSuccess() {
		a.addUnsuccessful(r)
		return
	}
	a.succeeded++
	a.accuracy.add(r)
	a.addTokens(r)
	a.addLatencies(r)
	a.server.add(r)
	a.reuse.add(r)
	if !a.child {
		a.reads.add(r)
	}
}

// addUnsuccessful counts a measured request that did not succeed: an
// expected rejection (a pass), the client's own failure, or the target's.
func (a *Aggregate) addUnsuccessful(r *Result) {
	switch {
	case r.ExpectedRejection():
		a.rejected++
	case r.Error == ErrClientResource:
		// The load generator's own failure: the target never saw it.
		a.clientFailed++
		a.errors[r.Error]++
	default:
		a.failed++
		a.errors[r.Error]++
		a.failedE2E.Record(r.E2EUS)
	}
}

func (a *Aggregate) addTokens(r *Result) {
	a.inTok += int64(inputTokens(r))
	a.outTok += int64(r.OutputTokens)
	a.reasoningTok += int64(r.ReasoningTokens)
	switch r.TokenSource {
	case TokensUsage:
		a.usage++
	case TokensNone:
	default:
		a.counted++
	}
	if r.UsageImplausible {
		a.implausible++
	}
	a.checks.add(r)
}

// inputTokens prefers the server's prompt_tokens; a server that reported
// none leaves InputTokens at 0 and the client's own count stands in.
func inputTokens(r *Result) int {
	if r.InputTokens > 0 {
		return r.InputTokens
	}
	return r.PromptTokensSent
}

func (a *Aggregate) addLatencies(r *Result) {
	a.e2e.Record(r.E2EUS)
	if r.OpenLoop {
		a.queue.Record(r.QueueDelayUS)
	}
	if a.child {
		// A run's ITL is its classes' merged (runITL): every gap is
		// recorded into its class's and its bucket's histograms, not a
		// third time here.
		r.EachGap(a.itl.RecordN)
	}
	// A non-streamed reply arrives whole: its "first token" is its end, so
	// TTFT and TPOT would describe the transport, not generation.
	if !r.Stream {
		// Only a reply that could have streamed text was "not streamed":
		// an embeddings, rerank or images reply has neither a max_tokens
		// nor output tokens, and no stream to ask for.
		if r.MaxTokens > 0 || r.OutputTokens > 0 {
			a.nonStream++
		}
		return
	}
	ttft, ok := TTFTUS(r)
	if !ok {
		return // no content event: nothing to time
	}
	a.reasoning.add(r, a.ttft, a.child)
	a.ttft.Record(ttft)
	a.cache.add(r)
	if tpot, ok := TPOTUS(r); ok {
		a.tpot.Record(tpot)
	}
}

// TTFTUS is a request's time to first token, the one rule every TTFT
// figure and drawing uses (docs/metrics.md#latency-metrics): the
// record's TTFT when it was streamed and carried a content event. ok is
// false otherwise: a non-streamed reply arrives whole, so its "first
// token" would be its end and time the transport, not generation.
func TTFTUS(r *Result) (us int64, ok bool) {
	if !r.Stream || r.TTFTUS <= 0 {
		return 0, false
	}
	return r.TTFTUS, true
}

// TPOTUS is a request's time per output token, the one definition every
// figure, SLO and export uses (docs/metrics.md#latency-metrics):
// (E2E − TTFT) / (output tokens − 1), rounded to the microsecond. ok is
// false when r has no TPOT: it was not streamed (its first token is its
// end), had no content event, or produced fewer than two tokens. E2E and
// TTFT share an origin, so an open-loop queue delay cancels out.
// Example: E2E 1 100 ms, TTFT 100 ms, 101 tokens → 10 ms per token.
func TPOTUS(r *Result) (us int64, ok bool) {
	ttft, ok := TTFTUS(r)
	if !ok {
		return 0, false
	}
	return TPOTOf(r.E2EUS, ttft, r.OutputTokens)
}

// TPOTOf is TPOTUS's rule on its inputs alone, for a model that has no
// Result (the simulator's calibration and fit): (e2eUS − ttftUS) ÷
// (outputTokens − 1), rounded to the microsecond; ok false under two
// tokens.
func TPOTOf(e2eUS, ttftUS int64, outputTokens int) (us int64, ok bool) {
	if outputTokens <= 1 {
		return 0, false
	}
	return int64(math.Round(float64(e2eUS-ttftUS) / float64(outputTokens-1))), true
}

// Running is the live view of an aggregate that a progress line shows.
type Running struct {
	Succeeded, Failed    int64
	Warmup, WarmupFailed int64
	OutputTokens         int64
	// Late counts measured open-loop requests that started late (the
	// summary's requests.late).
	Late             int64
	TTFTP50, TTFTP99 time.Duration
}

// Running returns the counts and TTFT percentiles so far, measured records
// only (warm-up records appear only in the warm-up counts). Expected
// rejections of bad input are passes and count as Succeeded here.
func (a *Aggregate) Running() Running {
	return Running{
		Succeeded: a.succeeded + a.rejected, Failed: a.failed,
		Warmup: a.warmup, WarmupFailed: a.warmupFailed,
		OutputTokens: a.outTok, Late: a.late,
		TTFTP50: time.Duration(a.ttft.QuantileUS(0.50)) * time.Microsecond,
		TTFTP99: time.Duration(a.ttft.QuantileUS(0.99)) * time.Microsecond,
	}
}

// Summary computes the summary of everything added so far. It can be called
// more than once; Add may continue afterwards. It holds figures only: the
// verdicts on them (warnings, hints, validity) are analyze.Diagnose's.
func (a *Aggregate) Summary(info RunInfo) *Summary {
	from, to, drained := a.window(info)
	windowS := float64(to-from) / 1e6
	f := a.figures(from, to, windowS)
	s := &Summary{
		SchemaVersion: SchemaVersion,
		Name:          info.Name,
		Started:       info.Started.UTC(),
		Mode:          info.Mode,
		WindowS:       windowS,
		Interrupted:   info.Interrupted,
		Requests:      f.Requests,
		FailureRate:   f.FailureRate,
		Errors:        f.Errors,
		Metrics:       f.Metrics,
		FailedE2E:     f.FailedE2E,
		Throughput:    f.Throughput,
		Tokens:        f.Tokens,
		ServerTime:    f.ServerTime,
		PrefixCache:   f.PrefixCache,
		Reasoning:     f.Reasoning,
		Accuracy:      f.Accuracy,
		PrefixReuse:   a.reuse.summary(),
		Checks:        a.checks.checks(),
	}
	s.Goodput = a.goodput(a.slo.table.For(DefaultClass), from, to, windowS)
	s.Compute = a.computeSummary(from, to, windowS)
	s.Retries = a.retry.summary()
	s.Classes = a.classBreakdowns(from, to, windowS)
	s.InputBuckets = a.bucketBreakdowns(from, to, windowS)
	s.Replicas = a.replicaBreakdowns(from, to, windowS)
	s.Chains = a.chains.summary(from, to, windowS)
	s.Sessions = a.sessions.summary(from, to, windowS)
	s.ClientReads = a.reads.summary()
	s.Connections = a.conns.summary()
	s.Tally = a.tally(drained)
	return s
}

func (a *Aggregate) requests() Requests {
	return Requests{
		Total:     a.succeeded + a.failed + a.rejected + a.clientFailed + a.warmup,
		Succeeded: a.succeeded, Failed: a.failed, ExpectedRejections: a.rejected,
		Warmup: a.warmup, Late: a.late, ClientFailed: a.clientFailed,
	}
}

// failureRate counts expected rejections as measured requests that did not
// fail, so bad input refused as it should be lowers it.
func (a *Aggregate) failureRate() float64 {
	return ratio(a.failed, a.succeeded+a.failed+a.rejected)
}

func (a *Aggregate) tokens() Tokens {
	return Tokens{
		Source:     a.tokenSource(),
		InputTotal: a.inTok, OutputTotal: a.outTok, ReasoningTotal: a.reasoningTok,
		UsageReported: a.usage, Counted: a.counted, UsageImplausible: a.implausible,
	}
}

// minOfferedUS is the shortest stretch of offered load throughput is
// measured over on its own; shorter runs include the drain.
const minOfferedUS = 1_000_000

// window is the measured window on the run clock: from the warm-up end to
// when issuing stopped, the time load was offered. A run killed before it
// wrote its closing events ends at its last completion; a run that offered
// load for under a second (a quick burst of requests) ends at its last
// reply, and drained says so.
func (a *Aggregate) window(info RunInfo) (from, to int64, drained bool) {
	end := info.EndUS
	if end <= 0 {
		end = a.lastDoneUS
	}
	from, to = info.WarmupEndUS, end
	if m := info.MeasureEndUS; m > 0 && m < end {
		if m-from >= minOfferedUS {
			return from, m, false
		}
		drained = true
	}
	return from, max(to, from), drained
}

func (a *Aggregate) errorCounts() map[string]int64 {
	m := make(map[string]int64, len(a.errors))
	for k, n := range a.errors {
		if n > 0 {
			m[string(k)] = n
		}
	}
	return m
}

func (a *Aggregate) tokenSource() string {
	switch {
	case a.usage == 0 && a.counted == 0: // nothing succeeded, or nothing generated tokens
		return SourceNone
	case a.counted == 0:
		return SourceUsage
	case a.usage == 0:
		return SourceCounted
	default:
		return SourceMixed
	}
}

func (a *Aggregate) clamped() int64 {
	var n int64
	for _, h := range []*Hist{a.ttft, a.runITL(), a.tpot, a.e2e, a.queue, a.failedE2E} {
		n += h.Clamped()
	}
	return n
}

// runITL is the aggregate's ITL histogram: a child's own, or a run's, the
// merge of its classes' (they partition its records, and a merge is
// exact). Recording each gap into the run, its class and its
// input-length bucket cost three histogram updates a token; this leaves
// two.
func (a *Aggregate) runITL() *Hist {
	if a.child {
		return a.itl
	}
	h := NewHist()
	for _, c := range a.split.classes {
		h.Merge(c.itl)
	}
	return h
}

// relDiff is (got − want) ÷ want, 0 when want is 0.
func relDiff(got, want int64) float64 {
	if want == 0 {
		return 0
	}
	return float64(got-want) / float64(want)
}

func ratio(n, d int64) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / float64(d)
}

func perSecond(n, windowS float64) float64 {
	if windowS <= 0 {
		return 0
	}
	return n / windowS
}
