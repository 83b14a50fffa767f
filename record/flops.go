package record

import "fmt"

// Model is what a FLOPs estimate needs to know about the served model. Only
// ParamsB is required; Layers and Hidden add the attention term, which
// grows with context length and dominates long prompts.
type Model struct {
	// ParamsB is the parameters, in billions, that work on each token (for
	// a mixture of experts, the active ones).
	ParamsB float64 `json:"params_b"`
	// Layers and Hidden are the transformer's depth and model width; 0
	// leaves the attention term out.
	Layers int `json:"layers,omitempty"`
	Hidden int `json:"hidden,omitempty"`
}

// Validate rejects sizes that would make every estimate meaningless.
func (m Model) Validate() error {
	if !(m.ParamsB > 0) || m.ParamsB > 1e6 {
		return fmt.Errorf("params_b %v: want the model's size in billions of parameters, e.g. 8", m.ParamsB)
	}
	if m.Layers < 0 || m.Hidden < 0 || (m.Layers > 0) != (m.Hidden > 0) {
		return fmt.Errorf("layers %d, hidden %d: give both (the attention term needs both) or neither", m.Layers, m.Hidden)
	}
	return nil
}

// The estimate, worked through (docs/metrics.md#compute has the same): a
// forward pass costs 2 FLOPs per parameter per token (one multiply, one
// add), 2N. Attention adds, per layer, QKᵀ and the weighted sum of V over
// the t positions a token at position t sees: 2·t·d FLOPs each, 4·L·d·t
// in all. A causal prompt of P tokens therefore costs
//
//	prefill(P)   = 2N·P + 4·L·d·(1 + 2 + … + P) = 2N·P + 2·L·d·P·(P+1)
//
// and yields the first output token. Each of the other O−1 output tokens
// is one more position, the j-th at position P+j:
//
//	decode(P, O) = 2N·(O−1) + 4·L·d·Σⱼ₌₁..O−1 (P+j)
//	             = 2N·(O−1) + 4·L·d·((O−1)·P + (O−1)·O/2)
//
// Example: 8B parameters, 32 layers, d = 4096, P = 1024, O = 128:
// prefill = 1.64e13 + 2.75e11 ≈ 1.67e13; decode = 2.03e12 + 7.2e10 ≈ 2.1e12.

// PrefillFLOPs estimates the FLOPs of processing a prompt of p tokens.
func (m Model) PrefillFLOPs(p int) float64 {
	if p <= 0 {
		return 0
	}
	n, pf := m.ParamsB*1e9, float64(p)
	return 2*n*pf + 2*m.attention()*pf*(pf+1)
}

// DecodeFLOPs estimates the FLOPs of generating o tokens after a prompt of
// p tokens (the first of which came out of the prefill).
func (m Model) DecodeFLOPs(p, o int) float64 {
	if o <= 1 {
		return 0
	}
	n, pf, steps := m.ParamsB*1e9, float64(max(p, 0)), float64(o-1)
	return 2*n*steps + 4*m.attention()*(steps*pf+steps*float64(o)/2)
}

// attention is L·d, the per-position attention cost factor.
func (m Model) attention() float64 { return float64(m.Layers) * float64(m.Hidden) }

// Compute is summary.json's FLOPs estimate: what the load asked of the
// model and what the server got through, in FLOPs.
type Compute struct {
	Model Model `json:"model"`
	// PrefillFLOPs and DecodeFLOPs total the measured successes, from the
	// tokens they actually used.
	PrefillFLOPs float64 `json:"prefill_flops"`
	DecodeFLOPs  float64 `json:"decode_flops"`
	// OfferedFLOPPerS is the FLOPs the requests that arrived in the
	// measured window asked for (prompt sent, max_tokens) ÷ window_s.
	OfferedFLOPPerS float64 `json:"offered_flop_per_s"`
	// AchievedFLOPPerS is the FLOPs done inside the window ÷ window_s:
	// each success's prefill at its first token, its decode spread over
	// its stream events.
	AchievedFLOPPerS        float64 `json:"achieved_flop_per_s"`
	AchievedPrefillFLOPPerS float64 `json:"achieved_prefill_flop_per_s"`
	AchievedDecodeFLOPPerS  float64 `json:"achieved_decode_flop_per_s"`
}

// computeState is an aggregate's FLOPs accounting; model nil means none.
type computeState struct {
	model           *Model
	prefill, decode float64 // measured successes
	offered         flopMeter
	achievedPrefill flopMeter
	achievedDecode  flopMeter
}

// SetModel declares the model's size so the summary estimates FLOPs (nil:
// no estimate, summary.json has no compute). Call it before the first Add.
func (a *Aggregate) SetModel(m *Model) {
	a.compute.model = m
}

// addCompute meters r's FLOPs: offered at its origin, whatever its
// outcome; achieved, for a success, when its tokens came out.
func (a *Aggregate) addCompute(r *Result) {
	m := a.compute.model
	if m == nil || a.child {
		return
	}
	want := r.MaxTokens
	if want <= 0 {
		want = r.OutputTokens
	}
	a.compute.offered.add(r.OriginUS(), m.PrefillFLOPs(r.PromptTokensSent)+m.DecodeFLOPs(r.PromptTokensSent, want))
	if !r.OK() {
		return
	}
	in := inputTokens(r)
	pre, dec := m.PrefillFLOPs(in), m.DecodeFLOPs(in, r.OutputTokens)
	if !r.Warmup {
		a.compute.prefill += pre
		a.compute.decode += dec
	}
	if len(r.EventsUS) == 0 {
		a.compute.achievedPrefill.add(r.DoneUS(), pre)
		a.compute.achievedDecode.add(r.DoneUS(), dec)
		return
	}
	a.compute.achievedPrefill.add(r.SendUS+r.EventsUS[0], pre)
	// The first event carries the prefill's token; decode work is spread
	// over the events after it (or lands on the only one there is).
	rest := r.EventsUS[min(1, len(r.EventsUS)-1):]
	a.compute.achievedDecode.m.spread(r.SendUS, rest, 1, 0, dec/float64(len(rest)))
}

// computeSummary is the estimate over [from, to]; nil without a model.
func (a *Aggregate) computeSummary(from, to int64, windowS float64) *Compute {
	c := &a.compute
	if c.model == nil {
		return nil
	}
	pre, dec := perSecond(c.achievedPrefill.over(from, to), windowS), perSecond(c.achievedDecode.over(from, to), windowS)
	return &Compute{
		Model: *c.model, PrefillFLOPs: c.prefill, DecodeFLOPs: c.decode,
		OfferedFLOPPerS:  perSecond(c.offered.over(from, to), windowS),
		AchievedFLOPPerS: pre + dec, AchievedPrefillFLOPPerS: pre, AchievedDecodeFLOPPerS: dec,
	}
}

// flopMeter sums one value (FLOPs, or a count) per slot of the run clock,
// like throughputMeter, so the rate can be taken over a window chosen at the
// end, in bounded memory.
type flopMeter struct {
	m slotMeter
}

// add puts v at instant us; instants beyond the meter's reach are dropped.
func (f *flopMeter) add(us int64, v float64) {
	if s := f.m.slot(us, 1); s != nil {
		s[0] += v
	}
}

// over sums [fromUS, toUS], prorating slots only partly inside.
func (f *flopMeter) over(fromUS, toUS int64) float64 {
	var sum float64
	f.m.each(fromUS, toUS, func(frac float64, v []float64) { sum += frac * v[0] })
	return sum
}
