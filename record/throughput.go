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
	// slotOutputAtEnd counts output tokens at their request's completion:
	// a live view cannot spread tokens over streams still running.
	slotOutputAtEnd
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
	done[slotOutputAtEnd] += float64(r.OutputTokens)
	// Output tokens arrive over the stream: spread them evenly over its
	// content events, so a long reply that started before the window only
	// counts the part that arrived inside it. A reply without events (not
	// streamed) delivers everything at its end.
	if len(r.EventsUS) == 0 || r.OutputTokens == 0 {
		done[slotOutputTokens] += float64(r.OutputTokens)
		return
	}
	per := float64(r.OutputTokens) / float64(r.ContentEvents())
	t.m.spread(r.SendUS, r.EventsUS, throughputWidth, slotOutputTokens, per)
	if tl := r.EventsTail; tl != nil && tl.Dropped > 0 {
		// The dropped events' times are gone: their tokens are spread
		// evenly from the last kept event to the last event.
		from := r.SendUS + r.EventsUS[len(r.EventsUS)-1]
		t.m.spreadEven(from, r.SendUS+tl.LastUS, throughputWidth, slotOutputTokens, per*float64(tl.Dropped))
	}
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

// Rate is the live throughput over [fromUS, toUS] on the run clock:
// successful requests that completed in it and their output tokens, per
// second, warm-up included. The progress line shows it over the last few
// seconds. (The summary spreads tokens over their stream events instead,
// which a live view cannot do for streams still running.)
func (a *Aggregate) Rate(fromUS, toUS int64) (requestsPerS, outputTokensPerS float64) {
	if toUS <= fromUS {
		return 0, 0
	}
	var reqs, out float64
	a.delivered.m.each(fromUS, toUS, func(f float64, v []float64) {
		reqs += f * v[slotRequests]
		out += f * v[slotOutputAtEnd]
	})
	s := float64(toUS-fromUS) / 1e6
	return reqs / s, out / s
}
