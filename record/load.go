package record

// loadMeter keeps, per slot of the run clock, how much of it requests spent
// in flight and how many were issued, so the load a run actually applied can
// be measured over its window from the records alone (a rebuild gets the
// same figure as the live run).
type loadMeter struct {
	m slotMeter
}

const (
	slotBusyUS = iota // microseconds requests spent in flight
	slotIssued        // requests whose latency origin fell in the slot
	slotDone          // requests that finished in the slot, any outcome
	loadWidth
)

// add meters one request, warm-up or measured, success or failure: each
// occupied the server and the client for its whole life.
func (l *loadMeter) add(r *Result) {
	if s := l.m.slot(r.OriginUS(), loadWidth); s != nil {
		s[slotIssued]++
	}
	if s := l.m.slot(r.DoneUS(), loadWidth); s != nil {
		s[slotDone]++
	}
	// A request's busy span is clamped to 1 h, as its latencies are
	// (histHighestUS): a garbled record claiming a year in flight would
	// otherwise cost a walk over every 100 ms slot of that year.
	start, end := r.SendUS, r.DoneUS()
	end = min(end, max(start, 0)+histHighestUS)
	l.m.reach(end)
	for t := max(start, 0); t < end; {
		next := min((t/meterSlotUS+1)*meterSlotUS, end)
		s := l.m.slot(t, loadWidth)
		if s == nil {
			return
		}
		s[slotBusyUS] += float64(next - t)
		t = next
	}
}

// AchievedLoad is the load the run actually applied in its measured
// window: the mean number of requests in flight for a closed loop (compare
// with its users), the issue rate for an open loop (compare with its rate).
func (a *Aggregate) AchievedLoad(info RunInfo) float64 {
	from, to, _ := a.window(info)
	if to <= from {
		return 0
	}
	var busy, issued float64
	a.load.m.each(from, to, func(f float64, v []float64) {
		busy += f * v[slotBusyUS]
		issued += f * v[slotIssued]
	})
	if info.Mode == ModeOpen {
		return issued / (float64(to-from) / 1e6)
	}
	return busy / float64(to-from)
}
