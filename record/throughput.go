package record

// throughputMeter keeps what the server delivered per 100 ms of the run
// clock, so throughput can be measured over a window chosen only at the end
// (warm-up end → issuing stop). It is a slotMeter of four values: bounded
// memory however long the run (BenchmarkSoakMemory measures it).
//
// Why not divide the measured requests' totals by the window? Because the
// two do not cover the same time. In a closed loop every user's first
// request is sent during the warm-up and completes inside the window: that
// work was done in the window but belongs to no measured request. And after
// issuing stops, the last replies drain at falling concurrency. A server
// doing 5 req/s steadily would show about 2 req/s in a one-minute run. So
// throughput counts what completed (requests) or arrived (tokens) inside the
// window, whoever sent it.
type throughputMeter struct {
	m slotMeter
}

// meterSlotUS is the meter's resolution. Window edges on a multiple of it
// (a warm-up of 10s, say) are exact; others are prorated within one slot.
const meterSlotUS = 100_000

// The values a throughput slot holds.
const (
	slotRequests     = iota // successful requests that completed
	slotOutputTokens        // output tokens, spread over their stream events
	slotInputTokens         // prompt tokens of the requests that completed
	throughputWidth
)

// maxMeterSlots bounds the run clock the meters reach (a year); later
// completions are not metered, so a garbled record cannot fold a run away.
const maxMeterSlots = 366 * 24 * 3600 * (1_000_000 / meterSlotUS)

// add meters one successful request (warm-up or measured).
func (t *throughputMeter) add(r *Result) {
	done := t.m.slot(r.DoneUS(), throughputWidth)
	if done == nil {
		return
	}
	done[slotRequests]++
	done[slotInputTokens] += float64(inputTokens(r))
	deliverOutput(r, t)
}

// outputSink receives a reply's output tokens at the times they arrived
// (deliverOutput): the throughput meter's slots, or OutputFlow's columns.
type outputSink interface {
	// atEvents adds per tokens at each instant base+offsets[k].
	atEvents(base int64, offsets []int64, per float64)
	// spreadEven adds total tokens spread evenly over [fromUS, toUS], all
	// at fromUS when the span is empty.
	spreadEven(fromUS, toUS int64, total float64)
}

// deliverOutput is throughput's rule for when a successful reply's output
// tokens arrived, the one every output-tokens rate uses. They arrive over
// the stream: spread evenly over its content events, so a long reply that
// started before the window only counts the part that arrived inside it.
// A reply without events (not streamed) delivers everything at its end.
func deliverOutput(r *Result, s outputSink) {
	if len(r.EventsUS) == 0 || r.OutputTokens == 0 {
		done := r.DoneUS()
		s.spreadEven(done, done, float64(r.OutputTokens))
		return
	}
	per := float64(r.OutputTokens) / float64(r.ContentEvents())
	s.atEvents(r.SendUS, r.EventsUS, per)
	if tl := r.EventsTail; tl != nil && tl.Dropped > 0 {
		// The dropped events' times are gone: their tokens are spread
		// evenly from the last kept event to the last event.
		from := r.SendUS + r.EventsUS[len(r.EventsUS)-1]
		s.spreadEven(from, r.SendUS+tl.LastUS, per*float64(tl.Dropped))
	}
}

func (t *throughputMeter) atEvents(base int64, offsets []int64, per float64) {
	t.m.spread(base, offsets, throughputWidth, slotOutputTokens, per)
}

func (t *throughputMeter) spreadEven(fromUS, toUS int64, total float64) {
	t.m.spreadEven(fromUS, toUS, throughputWidth, slotOutputTokens, total)
}

// over sums what was delivered in [fromUS, toUS].
func (t *throughputMeter) over(fromUS, toUS int64) (requests, outputTokens, inputTokens float64) {
	t.m.each(fromUS, toUS, func(f float64, v []float64) {
		requests += f * v[slotRequests]
		outputTokens += f * v[slotOutputTokens]
		inputTokens += f * v[slotInputTokens]
	})
	return requests, outputTokens, inputTokens
}

// Rate is the live throughput at nowUS on the run clock, warm-up
// included, for the progress line: successful requests that completed in
// the last spanUS, per second, and output tokens per second counted as
// the summary's throughput counts them, at the times they arrived (spread
// over their stream's events).
//
// Only finished requests are recorded, so the tokens that arrived in the
// last seconds mostly belong to streams still running and are not known
// yet; counting tokens at their request's completion instead made the line
// swing (230 ↔ 3123 tok/s on the demo, as long replies finished in bursts).
// So the token window ends lagUS before now, where lagUS is the E2E P90 so
// far (at most maxRateLagUS): by then nine in ten of the streams that
// delivered tokens in it have finished. The line is steady and reads low
// by the tokens of the slowest tenth, never high.
func (a *Aggregate) Rate(nowUS, spanUS int64) (requestsPerS, outputTokensPerS float64) {
	if spanUS <= 0 {
		return 0, 0
	}
	from := max(nowUS-spanUS, 0)
	var reqs, out float64
	a.delivered.m.each(from, nowUS, func(f float64, v []float64) { reqs += f * v[slotRequests] })
	lag := min(a.rateLagUS(), maxRateLagUS)
	tokTo := max(nowUS-lag, 0)
	tokFrom := max(tokTo-spanUS, 0)
	a.delivered.m.each(tokFrom, tokTo, func(f float64, v []float64) { out += f * v[slotOutputTokens] })
	reqS := float64(nowUS-from) / 1e6
	tokS := float64(tokTo-tokFrom) / 1e6
	if reqS > 0 {
		requestsPerS = reqs / reqS
	}
	if tokS > 0 {
		outputTokensPerS = out / tokS
	}
	return requestsPerS, outputTokensPerS
}

// maxRateLagUS bounds Rate's token lag, so a run of minute-long replies
// still shows tokens within a minute.
const maxRateLagUS = 60_000_000

// rateLagUS is the E2E P90 of the measured successes so far, or of none
// (0) before the first.
func (a *Aggregate) rateLagUS() int64 {
	if a.e2e.Count() == 0 {
		return 0
	}
	return a.e2e.QuantileUS(0.90)
}
