package record

// throughputMeter keeps what the server delivered per 100 ms of the run
// clock, so throughput can be measured over a window chosen only at the end
// (warm-up end → issuing stop). Memory is one 24-byte bucket per 100 ms of
// the run: an hour holds 0.9 MB, a day-long soak 21 MB.
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
	slots []delivered
}

// meterSlotUS is the meter's resolution. Window edges on a multiple of it
// (a warm-up of 10s, say) are exact; others are prorated within one slot.
const meterSlotUS = 100_000

// delivered is what arrived during one slot of the run clock.
type delivered struct {
	requests     int64   // successful requests that completed
	outputTokens float64 // output tokens, spread over their stream events
	inputTokens  int64   // prompt tokens of the requests that completed
	// outputAtEnd counts output tokens at their request's completion: a
	// live view cannot spread tokens over streams that are still running.
	outputAtEnd int64
}

// maxMeterSlots bounds the meter (7 days); later completions are not
// metered, and a garbled record cannot allocate without bound.
const maxMeterSlots = 7 * 24 * 3600 * (1_000_000 / meterSlotUS)

// add meters one successful request (warm-up or measured).
func (m *throughputMeter) add(r *Result) {
	done := m.at(r.DoneUS())
	if done == nil {
		return
	}
	done.requests++
	done.inputTokens += int64(inputTokens(r))
	done.outputAtEnd += int64(r.OutputTokens)
	// Output tokens arrive over the stream: spread them evenly over its
	// content events, so a long reply that started before the window only
	// counts the part that arrived inside it. A reply without events (not
	// streamed) delivers everything at its end.
	if len(r.EventsUS) == 0 || r.OutputTokens == 0 {
		done.outputTokens += float64(r.OutputTokens)
		return
	}
	per := float64(r.OutputTokens) / float64(len(r.EventsUS))
	for _, ev := range r.EventsUS {
		if s := m.at(r.SendUS + ev); s != nil {
			s.outputTokens += per
		}
	}
}

// at returns the slot holding instant us, growing the meter.
func (m *throughputMeter) at(us int64) *delivered {
	i := max(us, 0) / meterSlotUS
	if i >= maxMeterSlots {
		return nil
	}
	for int64(len(m.slots)) <= i {
		m.slots = append(m.slots, delivered{})
	}
	return &m.slots[i]
}

// over sums what was delivered in [fromUS, toUS].
func (m *throughputMeter) over(fromUS, toUS int64) (requests, outputTokens, inputTokens float64) {
	m.each(fromUS, toUS, func(f float64, d *delivered) {
		requests += f * float64(d.requests)
		outputTokens += f * d.outputTokens
		inputTokens += f * float64(d.inputTokens)
	})
	return requests, outputTokens, inputTokens
}

// each calls fn with every slot overlapping [fromUS, toUS] and the fraction
// of it inside. A slot only partly inside contributes in proportion to its
// overlap (deliveries are taken as spread evenly within their slot).
func (m *throughputMeter) each(fromUS, toUS int64, fn func(f float64, d *delivered)) {
	first := max(fromUS, 0) / meterSlotUS
	for i := first; i < int64(len(m.slots)); i++ {
		start := i * meterSlotUS
		if start >= toUS {
			return
		}
		overlap := min(start+meterSlotUS, toUS) - max(start, fromUS)
		if overlap > 0 {
			fn(float64(overlap)/meterSlotUS, &m.slots[i])
		}
	}
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
	a.delivered.each(fromUS, toUS, func(f float64, d *delivered) {
		reqs += f * float64(d.requests)
		out += f * float64(d.outputAtEnd)
	})
	s := float64(toUS-fromUS) / 1e6
	return reqs / s, out / s
}
