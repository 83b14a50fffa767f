package record

import "strconv"

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
}

// ChainSummary is summary.json's chains.<class>: the class's end-to-end
// figures and one entry per step, in chain order.
type ChainSummary struct {
	// Chains is the number of measured chain requests; Failed of them failed.
	Chains int64 `json:"chains"`
	Failed int64 `json:"failed"`
	// E2E is the end-to-end latency of the successful chains, from the
	// latency origin to the end of the last step.
	E2E   Stats              `json:"e2e_ms"`
	Steps []ChainStepSummary `json:"steps"`
}

// ChainStepSummary is one step of a chain class across its measured chains.
type ChainStepSummary struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Started counts chains that reached the step; Failed those that
	// failed at it (and ran no further step).
	Started int64            `json:"started"`
	Failed  int64            `json:"failed"`
	Errors  map[string]int64 `json:"errors"`
	// Latency is the step's own latency in successful chains.
	Latency Stats `json:"latency_ms"`
	// TTFT is the step's time to first content event in successful chains
	// (streamed model steps only).
	TTFT Stats `json:"ttft_ms"`
	// ShareOfE2E is the step's total latency over the chains' total
	// end-to-end latency, both over successful chains: where the time goes.
	ShareOfE2E float64 `json:"share_of_e2e"`
}

// chainAgg accumulates one chain class.
type chainAgg struct {
	chains, failed int64
	e2e            *Hist
	e2eSumUS       int64
	steps          []*chainStepAgg
}

type chainStepAgg struct {
	name, kind      string
	started, failed int64
	errors          map[ErrorKind]int64
	latency, ttft   *Hist
	sumUS           int64
}

// chainState is an aggregate's per-class chain accumulators.
type chainState map[string]*chainAgg

// add folds a measured chain record in; other records are ignored.
func (cs *chainState) add(r *Result) {
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
		c = &chainAgg{e2e: NewHist()}
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
	for k := range r.Chain {
		c.step(k, &r.Chain[k]).add(&r.Chain[k], r.OK())
	}
}

// step returns the accumulator of step k, named after its first record.
func (c *chainAgg) step(k int, s *ChainStep) *chainStepAgg {
	for len(c.steps) <= k {
		c.steps = append(c.steps, nil)
	}
	if c.steps[k] == nil {
		c.steps[k] = &chainStepAgg{name: s.Name, kind: s.Kind, errors: map[ErrorKind]int64{},
			latency: NewHist(), ttft: NewHist()}
	}
	return c.steps[k]
}

func (a *chainStepAgg) add(s *ChainStep, chainOK bool) {
	a.started++
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

// summary returns the chain classes' figures, nil when the run had none.
func (cs chainState) summary() map[string]*ChainSummary {
	if len(cs) == 0 {
		return nil
	}
	out := make(map[string]*ChainSummary, len(cs))
	for name, c := range cs {
		out[name] = c.summary()
	}
	return out
}

func (c *chainAgg) summary() *ChainSummary {
	s := &ChainSummary{Chains: c.chains, Failed: c.failed, E2E: c.e2e.Stats(),
		Steps: make([]ChainStepSummary, 0, len(c.steps))}
	for k, st := range c.steps {
		if st == nil { // cannot happen: step k-1 ran before step k
			st = &chainStepAgg{name: "step" + strconv.Itoa(k+1), errors: map[ErrorKind]int64{},
				latency: NewHist(), ttft: NewHist()}
		}
		s.Steps = append(s.Steps, ChainStepSummary{Name: st.name, Kind: st.kind,
			Started: st.started, Failed: st.failed, Errors: errorMap(st.errors),
			Latency: st.latency.Stats(), TTFT: st.ttft.Stats(), ShareOfE2E: ratio(st.sumUS, c.e2eSumUS)})
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
