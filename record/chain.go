package record

import (
	"math"
	"slices"
	"strings"
)

// ChainStep is one call of a multi-step chain request (embeddings, then a
// retrieval, then chat, ...), as Result.Chain lists them. Steps that never
// ran, after a failed one, are absent.
type ChainStep struct {
	// Name labels the step ("embeddings", "retrieve", "chat", ...).
	Name string `json:"name"`
	// Kind is the step's API: chat, completions, embeddings, http or tool
	// (a graph's mocked tool).
	Kind string `json:"kind"`
	// SendUS is when the step's request was sent, on the run clock.
	SendUS int64 `json:"send_us"`
	// TTFTUS is the step's first content event after SendUS; 0 without one.
	TTFTUS int64 `json:"ttft_us,omitempty"`
	// DurUS is the step's latency, from SendUS to its end.
	DurUS  int64     `json:"dur_us"`
	Status int       `json:"status,omitempty"`
	Error  ErrorKind `json:"error,omitempty"`
	// InputTokens and OutputTokens are the server's usage figures for a
	// model step (0 when it reported none, and for http steps).
	InputTokens  int   `json:"input_tokens,omitempty"`
	OutputTokens int   `json:"output_tokens,omitempty"`
	BytesIn      int64 `json:"bytes_in,omitempty"`
	// Skipped marks a graph's tool that ran only on a tool call, when no
	// reply before it asked for one: not sent, not failed.
	Skipped bool `json:"skipped,omitempty"`
	// ReplyCut marks a model call whose reply the calls after it were to
	// carry but was longer than the client keeps (MaxReplyKept): they
	// carried the text that was kept, and a tool call past it was read
	// as none (its tool's result then went as text).
	ReplyCut bool `json:"reply_cut,omitempty"`
}

// ChainSummary is summary.json's chains.<class>: the figures of a chain
// or graph class's tasks (its requests) and one entry per step, a graph's
// nodes in topological order, a node's copies together.
type ChainSummary struct {
	// Chains is the number of measured tasks; Failed of them failed.
	Chains int64 `json:"chains"`
	Failed int64 `json:"failed"`
	// E2E is the end-to-end latency of the successful tasks, from the
	// latency origin to the end of the last call.
	E2E   Stats              `json:"e2e_ms"`
	Steps []ChainStepSummary `json:"steps"`
	// CallsPerTask counts the calls each successful task sent (a
	// fan-out's copies each, skipped tools not); TokensPerTask sums
	// their input and output tokens as the server reported them.
	CallsPerTask  CountStats `json:"calls_per_task"`
	TokensPerTask CountStats `json:"tokens_per_task"`
	// Goodput is the tasks every model call of which met the class's SLO;
	// nil when the class has none.
	Goodput *TaskGoodput `json:"goodput,omitempty"`
}

// TaskGoodput is the part of a class's tasks whose every model call met
// the class's SLO, each call judged as a request is (SLO.Met, its
// latency from its own send). HTTP calls and tools are not judged.
type TaskGoodput struct {
	SLO SLO `json:"slo"`
	// Met counts measured tasks that succeeded with every model call
	// within the SLO; Attainment is Met ÷ tasks.
	Met        int64   `json:"met"`
	Attainment float64 `json:"attainment"`
	// TasksPerS is such tasks completing inside the measured window ÷
	// window_s.
	TasksPerS float64 `json:"tasks_per_s"`
}

// CountStats is the spread of a count per task.
type CountStats struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// countHist keeps counts in a latency histogram as thousandths, so that
// its microseconds-to-milliseconds Stats give the counts back: the mean,
// minimum and maximum exact, the percentiles to 3 significant digits
// (exact up to 1000), rounded to whole counts; up to 3.6 million.
type countHist struct{ h *Hist }

func (c countHist) record(n int64) { c.h.Record(n * 1000) }

func (c countHist) stats() CountStats {
	s := c.h.Stats()
	return CountStats{Count: s.Count, Mean: s.Mean, P50: math.Round(s.P50), P90: math.Round(s.P90), P99: math.Round(s.P99), Max: s.Max}
}

// ChainStepSummary is one step of a chain class across its measured chains.
type ChainStepSummary struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Started counts the step's calls (one per task that reached it, or
	// one per copy of a fan-out); Failed those that failed (and ended
	// the task); Skipped the tools that ran only on a tool call, when no
	// reply asked for one.
	Started int64 `json:"started"`
	Failed  int64 `json:"failed"`
	Skipped int64 `json:"skipped,omitempty"`
	// RepliesCut counts the calls whose reply was too long to pass on
	// whole (ChainStep.ReplyCut).
	RepliesCut int64            `json:"replies_cut,omitempty"`
	Errors     map[string]int64 `json:"errors"`
	// Latency is the step's own latency in successful chains.
	Latency Stats `json:"latency_ms"`
	// TTFT is the step's time to first content event in successful chains
	// (streamed model steps only).
	TTFT Stats `json:"ttft_ms"`
	// ShareOfE2E is the step's total latency over the chains' total
	// end-to-end latency, both over successful chains: where the time goes.
	ShareOfE2E float64 `json:"share_of_e2e"`
}

// chainAgg accumulates one chain or graph class.
type chainAgg struct {
	chains, failed int64
	e2e            *Hist
	e2eSumUS       int64
	steps          []*chainStepAgg // in topological order
	calls, tokens  countHist
	// slo judges task goodput; judged is false without one.
	slo    SLO
	judged bool
	met    int64
	good   flopMeter
}

type chainStepAgg struct {
	name, kind                    string
	started, failed, skipped, cut int64
	errors                        map[ErrorKind]int64
	latency, ttft                 *Hist
	sumUS                         int64
}

// chainState is an aggregate's per-class chain accumulators.
type chainState map[string]*chainAgg

// add folds a measured chain or graph record in, its model calls judged
// by slo (judged false: no SLO); other records are ignored.
func (cs *chainState) add(r *Result, slo SLO, judged bool) {
	if len(r.Chain) == 0 || r.Warmup {
		return
	}
	if *cs == nil {
		*cs = make(chainState)
	}
	class := r.Class
	if class == "" {
		class = DefaultClass
	}
	c := (*cs)[class]
	if c == nil {
		c = &chainAgg{e2e: NewHist(), calls: countHist{NewHist()}, tokens: countHist{NewHist()}, slo: slo, judged: judged}
		(*cs)[class] = c
	}
	c.add(r)
}

func (c *chainAgg) add(r *Result) {
	c.chains++
	if !r.OK() {
		c.failed++
	} else {
		c.e2e.Record(r.E2EUS)
		c.e2eSumUS += r.E2EUS
	}
	var calls, tokens int64
	for k := range r.Chain {
		s := &r.Chain[k]
		c.step(r.Chain, k).add(s, r.OK())
		if s.Skipped {
			continue
		}
		calls++
		tokens += int64(s.InputTokens + s.OutputTokens)
	}
	if !r.OK() {
		return
	}
	c.calls.record(calls)
	c.tokens.record(tokens)
	if c.judged && TaskMet(r, c.slo) {
		c.met++
		c.good.add(r.DoneUS(), 1)
	}
}

// TaskMet reports whether chain or graph task r met slo, task goodput's
// rule: the task succeeded and every model call it made (HTTP and tool
// steps are no model's, skipped steps made none) met slo on its own
// latencies.
func TaskMet(r *Result, slo SLO) bool {
	if !r.OK() {
		return false
	}
	for k := range r.Chain {
		s := &r.Chain[k]
		if !s.Skipped && s.isModel() && !slo.Met(s.asRequest(r.Class)) {
			return false
		}
	}
	return true
}

// isModel reports whether the step was a model call (not HTTP, not a tool).
func (s *ChainStep) isModel() bool { return s.Kind != "http" && s.Kind != "tool" }

// asRequest is a model call as the request SLO.Met judges: its latency
// from its own send, its TTFT when streamed.
func (s *ChainStep) asRequest(class string) *Result {
	return &Result{Class: class, Stream: s.TTFTUS > 0, TTFTUS: s.TTFTUS, E2EUS: s.DurUS, OutputTokens: s.OutputTokens,
		Error: s.Error}
}

// NodeName is the graph node a step belongs to: its name without a
// fan-out copy's "#k" ('#' is not allowed in a name).
func NodeName(step string) string {
	name, _, _ := strings.Cut(step, "#")
	return name
}

// step returns the accumulator of steps[k]'s node. A node first seen is
// placed right after the node of the step before it: every record lists
// its calls in the graph's topological order, so the nodes stay in that
// order whichever tasks reached them.
func (c *chainAgg) step(steps []ChainStep, k int) *chainStepAgg {
	name := NodeName(steps[k].Name)
	if j := slices.IndexFunc(c.steps, func(a *chainStepAgg) bool { return a.name == name }); j >= 0 {
		return c.steps[j]
	}
	at := 0
	if k > 0 {
		prev := NodeName(steps[k-1].Name)
		at = slices.IndexFunc(c.steps, func(a *chainStepAgg) bool { return a.name == prev }) + 1
	}
	a := &chainStepAgg{name: name, kind: steps[k].Kind, errors: map[ErrorKind]int64{},
		latency: NewHist(), ttft: NewHist()}
	c.steps = slices.Insert(c.steps, at, a)
	return a
}

func (a *chainStepAgg) add(s *ChainStep, chainOK bool) {
	if s.Skipped {
		a.skipped++
		return
	}
	a.started++
	if s.ReplyCut {
		a.cut++
	}
	if s.Error != ErrNone {
		a.failed++
		a.errors[s.Error]++
		return
	}
	if !chainOK {
		return // a later step failed: this one's time is not a success's
	}
	a.latency.Record(s.DurUS)
	a.sumUS += s.DurUS
	if s.TTFTUS > 0 {
		a.ttft.Record(s.TTFTUS)
	}
}

// summary returns the chain classes' figures, nil when the run had none;
// task goodput is counted over [from, to].
func (cs chainState) summary(from, to int64, windowS float64) map[string]*ChainSummary {
	if len(cs) == 0 {
		return nil
	}
	out := make(map[string]*ChainSummary, len(cs))
	for name, c := range cs {
		out[name] = c.summary(from, to, windowS)
	}
	return out
}

func (c *chainAgg) summary(from, to int64, windowS float64) *ChainSummary {
	s := &ChainSummary{Chains: c.chains, Failed: c.failed, E2E: c.e2e.Stats(),
		Steps:        make([]ChainStepSummary, 0, len(c.steps)),
		CallsPerTask: c.calls.stats(), TokensPerTask: c.tokens.stats()}
	for _, st := range c.steps {
		s.Steps = append(s.Steps, ChainStepSummary{Name: st.name, Kind: st.kind,
			Started: st.started, Failed: st.failed, Skipped: st.skipped, RepliesCut: st.cut, Errors: errorMap(st.errors),
			Latency: st.latency.Stats(), TTFT: st.ttft.Stats(), ShareOfE2E: ratio(st.sumUS, c.e2eSumUS)})
	}
	if c.judged {
		s.Goodput = &TaskGoodput{SLO: c.slo, Met: c.met, Attainment: ratio(c.met, c.chains),
			TasksPerS: perSecond(c.good.over(from, to), windowS)}
	}
	return s
}

// errorMap converts error counts for JSON (encoding/json sorts the keys).
func errorMap(m map[ErrorKind]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, n := range m {
		out[string(k)] = n
	}
	return out
}
