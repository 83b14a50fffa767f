package record

// ServerTimeSummary is where the time of the successful streamed requests
// went, by the server's own account (Result.Server): summary.json's
// server_time. Only durations each side measured itself are combined,
// never instants of two clocks (docs/metrics.md#server-time).
type ServerTimeSummary struct {
	// Requests counts the measured successful requests whose reply (or
	// joined span) carried server timings, streamed or not.
	Requests int64 `json:"requests"`
	// FromSpans counts those whose figures came from an OTLP span joined
	// by trace id (a span wins over in-band timings: it is the fuller
	// account, queue included); the rest came in the reply itself.
	FromSpans int64 `json:"from_spans,omitempty"`
	// QueueMS is the server's wait before prefill, over the requests whose
	// server reports it (llama.cpp does not); nil when none did.
	QueueMS *Stats `json:"queue_ms,omitempty"`
	// PrefillMS and DecodeMS are the server's prompt and generation times.
	PrefillMS Stats `json:"prefill_ms"`
	DecodeMS  Stats `json:"decode_ms"`
	// OutsideMS, over the streamed ones (a whole reply has no first token
	// of its own), is the client's time from sending to the first token minus
	// the server's queue (when reported) and prefill: network, gateway,
	// HTTP-thread wait and, without a queue figure, the server's queue.
	OutsideMS Stats `json:"outside_ms"`
	// WaitMS is, for the streamed requests whose server reports no queue
	// (llama.cpp), the wait inferred before the server began each one:
	// its time outside the server less OutsideFloorMS. Rule: the least
	// time outside the server over those requests is taken as the network
	// and HTTP floor, the time of a request that found the server free; a
	// request's excess over it is its wait for a slot. Inferred, so
	// labelled so: a run in which no request found the server free
	// overstates the floor and understates the wait. nil when every timed
	// reply reported its queue.
	WaitMS *Stats `json:"wait_ms,omitempty"`
	// OutsideFloorMS is that floor, in ms.
	OutsideFloorMS float64 `json:"outside_floor_ms,omitempty"`
	// CachedTokens sums the prompt tokens served from the prefix cache.
	CachedTokens int64 `json:"cached_tokens"`
}

// serverTimeState accumulates ServerTimeSummary; its histograms are made
// on the first timed record, so runs against servers without timings pay
// nothing.
type serverTimeState struct {
	n, cached, fromSpans            int64
	queue, prefill, decode, outside *Hist
	unqueued                        *Hist // outside times of streamed replies without a queue figure
}

// OutsideUS is the part of r's time to first token the server does not
// account for: the client's send-to-first-token time (its own clock) minus
// the server's queue (when reported) and prefill (its clock). ok is false
// without server timings or a first token. Clock granularity can make it
// slightly negative. A chain or graph task's record carries the server
// timings of its final call, so its own TTFT is that call's, from that
// call's send, not the task's (which spans every call before it).
func OutsideUS(r *Result) (us int64, ok bool) {
	if r.Server == nil || r.TTFTUS <= 0 || !r.Stream {
		return 0, false
	}
	sendTTFT := r.TTFTUS - (r.SendUS - r.OriginUS()) // from this attempt's send
	if len(r.Chain) > 0 {
		final, found := finalStep(r.Chain)
		if !found || final.TTFTUS <= 0 {
			return 0, false
		}
		sendTTFT = final.TTFTUS
	}
	return sendTTFT - r.Server.QueueUS - r.Server.PrefillUS, true
}

// finalStep is the call of a task that ended last (the engine's record
// takes its trace); found is false when none was sent.
func finalStep(steps []ChainStep) (final ChainStep, found bool) {
	for _, s := range steps {
		if !s.Skipped && (!found || s.SendUS+s.DurUS >= final.SendUS+final.DurUS) {
			final, found = s, true
		}
	}
	return final, found
}

// add folds one measured successful record in. A non-streamed reply's
// timings count for queue, prefill and decode; it has no first token of
// its own, so no time outside the server.
func (st *serverTimeState) add(r *Result) {
	if r.Server == nil {
		return
	}
	out, hasOutside := OutsideUS(r)
	if st.prefill == nil {
		st.queue, st.prefill, st.decode, st.outside, st.unqueued = NewHist(), NewHist(), NewHist(), NewHist(), NewHist()
	}
	st.n++
	st.cached += int64(r.CachedTokens)
	if r.Server.FromSpan {
		st.fromSpans++
	}
	if r.Server.HasQueue {
		st.queue.Record(r.Server.QueueUS)
	}
	st.prefill.Record(r.Server.PrefillUS)
	st.decode.Record(r.Server.DecodeUS)
	if hasOutside {
		st.outside.Record(out)
		if !r.Server.HasQueue {
			st.unqueued.Record(out)
		}
	}
}

// summary is nil when no record carried server timings.
func (st *serverTimeState) summary() *ServerTimeSummary {
	if st.n == 0 {
		return nil
	}
	s := &ServerTimeSummary{
		Requests:  st.n,
		PrefillMS: st.prefill.Stats(), DecodeMS: st.decode.Stats(), OutsideMS: st.outside.Stats(),
		CachedTokens: st.cached, FromSpans: st.fromSpans,
	}
	if q := st.queue.Stats(); q.Count > 0 {
		s.QueueMS = &q
	}
	if u := st.unqueued.Stats(); u.Count > 0 {
		s.OutsideFloorMS = max(u.Min, 0)
		wait := u.Shifted(-s.OutsideFloorMS)
		s.WaitMS = &wait
	}
	return s
}
