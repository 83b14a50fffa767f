package record

// Per-channel timing of reasoning models (docs/metrics.md#reasoning).
//
// A reply's content events are of two channels: reasoning (reasoning_content
// or reasoning deltas, Ollama's thinking, text inside <think> tags when the
// plan asks) and answer (everything else that is output). A record keeps
// the channel of each event compactly: ReasoningEvents and
// ChannelsInterleaved. A reply that reasons and then answers, the usual
// shape, has its first ReasoningEvents events in the reasoning channel and
// the rest in the answer channel:
//
//	events   R R R R A A A        ReasoningEvents 4
//	index    0 1 2 3 4 5 6        TTFR = TTFT, TTFO at event 4
//	gaps      r r r . a a         reasoning ITL 3 gaps, answer ITL 2;
//	                              the switch gap (3→4) is neither's
//
// A reply whose channels interleave (a reasoning event after an answer
// event) keeps its TTFR and TTFO but has no per-channel ITL: which of its
// gaps belong to which channel is not kept.

// TTFRUSOf is a request's time to first reasoning token, the one rule
// every TTFR figure uses: set only for a streamed reply that reasoned.
func TTFRUSOf(r *Result) (us int64, ok bool) {
	if !r.Stream || r.ReasoningEvents <= 0 || r.TTFRUS <= 0 {
		return 0, false
	}
	return r.TTFRUS, true
}

// TTFOUSOf is a request's time to first answer (output) token: the first
// event that is not reasoning. For a reply that did not reason it is its
// TTFT; a reply that reasoned and was cut off before it answered has none.
func TTFOUSOf(r *Result) (us int64, ok bool) {
	if r.ReasoningEvents <= 0 {
		return TTFTUS(r)
	}
	if !r.Stream || r.TTFOUS <= 0 {
		return 0, false
	}
	return r.TTFOUS, true
}

// ReasoningPhaseUS is the length of a reply's reasoning phase: TTFO −
// TTFR, when an answer followed the first reasoning event.
func ReasoningPhaseUS(r *Result) (us int64, ok bool) {
	ttfr, ok := TTFRUSOf(r)
	if !ok {
		return 0, false
	}
	ttfo, ok := TTFOUSOf(r)
	if !ok || ttfo < ttfr {
		return 0, false
	}
	return ttfo - ttfr, true
}

// EachChannelGap calls reasoning and answer for every gap between two
// consecutive events of the same channel of a streamed reply that
// reasoned and did not interleave (the table above): the kept events'
// gaps, then the tail's, which are the answer's when the reasoning phase
// ended among the kept events (else they are left out: their channel is
// not known). A reply that did not reason calls neither: its gaps are all
// in ITL.
func (r *Result) EachChannelGap(reasoning, answer func(gapUS, n int64)) {
	k := r.ReasoningEvents
	if !r.Stream || k <= 0 || r.ChannelsInterleaved {
		return
	}
	for i := 1; i < len(r.EventsUS); i++ {
		g := r.EventsUS[i] - r.EventsUS[i-1]
		switch {
		case i < k:
			reasoning(g, 1)
		case i > k:
			answer(g, 1)
		}
	}
	if r.EventsTail == nil || k >= len(r.EventsUS) {
		return
	}
	for _, g := range r.EventsTail.Gaps {
		if g[1] > 0 {
			answer(g[0], g[1])
		}
	}
}

// ReasoningSummary counts the measured successful streamed requests that
// reasoned: summary.json's reasoning, per run, class, bucket and step;
// absent when none did, so other models' summaries are unchanged.
type ReasoningSummary struct {
	// Requests that carried at least one reasoning event.
	Requests int64 `json:"requests"`
	// Unanswered of them ended with no answer event (cut off while
	// reasoning, often by max_tokens): they have a TTFR but no TTFO.
	Unanswered int64 `json:"unanswered"`
	// Interleaved of them had a reasoning event after an answer event:
	// left out of itl_reasoning_ms and itl_answer_ms.
	Interleaved int64 `json:"interleaved"`
	// ReasoningEvents and AnswerEvents are their content events by
	// channel.
	ReasoningEvents int64 `json:"reasoning_events"`
	AnswerEvents    int64 `json:"answer_events"`
}

// reasoningState holds an aggregate's per-channel figures. It stays empty
// (nil histograms) until a request reasons, so runs of other models pay
// nothing and their summaries are unchanged.
type reasoningState struct {
	// ttfo holds every streamed success's TTFO once one reasoned: at that
	// moment it starts as a copy of the TTFT histogram, which holds the
	// TTFO of every request before it (none reasoned, so TTFO = TTFT).
	ttfo                  *Hist
	ttfr, phase           *Hist
	itlReasoning, itlAnsw *Hist // a child's own; a run merges its classes'
	counts                ReasoningSummary
}

// add folds in a streamed success with a first token, before ttft (the
// aggregate's TTFT histogram) records it. child says whether a is a
// class's or bucket's aggregate, which records the per-channel gaps.
func (s *reasoningState) add(r *Result, ttft *Hist, child bool) {
	if r.ReasoningEvents > 0 && s.ttfo == nil {
		s.ttfo, s.ttfr, s.phase = NewHist(), NewHist(), NewHist()
		s.itlReasoning, s.itlAnsw = NewHist(), NewHist()
		s.ttfo.Merge(ttft)
	}
	if s.ttfo == nil {
		return
	}
	if us, ok := TTFOUSOf(r); ok {
		s.ttfo.Record(us)
	}
	if r.ReasoningEvents <= 0 {
		return
	}
	c := &s.counts
	c.Requests++
	c.ReasoningEvents += int64(r.ReasoningEvents)
	c.AnswerEvents += int64(r.ContentEvents() - r.ReasoningEvents)
	if r.ChannelsInterleaved {
		c.Interleaved++
	}
	if us, ok := TTFRUSOf(r); ok {
		s.ttfr.Record(us)
	}
	if _, ok := TTFOUSOf(r); !ok {
		c.Unanswered++
	}
	if us, ok := ReasoningPhaseUS(r); ok {
		s.phase.Record(us)
	}
	if child {
		r.EachChannelGap(s.itlReasoning.RecordN, s.itlAnsw.RecordN)
	}
}

// summary returns the counts, nil when no request reasoned.
func (s *reasoningState) summary() *ReasoningSummary {
	if s.ttfo == nil {
		return nil
	}
	c := s.counts
	return &c
}

// metrics sets m's per-channel figures when some request reasoned; itl
// gives the per-channel gap histograms (a child's own, a run's merged).
func (s *reasoningState) metrics(m *Metrics, itlReasoning, itlAnswer *Hist) {
	if s.ttfo == nil {
		return
	}
	stats := func(h *Hist) *Stats { st := h.Stats(); return &st }
	m.TTFR, m.TTFO, m.ReasoningPhase = stats(s.ttfr), stats(s.ttfo), stats(s.phase)
	m.ITLReasoning, m.ITLAnswer = stats(itlReasoning), stats(itlAnswer)
}

// channelITL is the aggregate's per-channel gap histograms: a child's own,
// or a run's merged from its classes' (as runITL).
func (a *Aggregate) channelITL() (reasoning, answer *Hist) {
	if a.child || a.reasoning.ttfo == nil {
		return a.reasoning.itlReasoning, a.reasoning.itlAnsw
	}
	reasoning, answer = NewHist(), NewHist()
	for _, c := range a.split.classes {
		if c.reasoning.ttfo != nil {
			reasoning.Merge(c.reasoning.itlReasoning)
			answer.Merge(c.reasoning.itlAnsw)
		}
	}
	return reasoning, answer
}
