package record

// LoadTrend is how the load moved over a run's measured window, from the
// records alone (a rebuild gets the same figures): what was issued and
// what finished, and how many requests were in flight in each half. An
// open loop whose completions fall behind its arrivals while the number
// in flight grows is past what the server can serve (analyze's overload
// hint), whatever the server's own metrics say.
type LoadTrend struct {
	// WindowS is the measured window's length in seconds.
	WindowS float64
	// Issued counts requests whose latency origin (intended time in an
	// open loop) fell in the window; Completed those that finished in it,
	// any outcome.
	Issued, Completed float64
	// InFlightFirst and InFlightSecond are the mean number of requests in
	// flight over the first and the second half of the window.
	InFlightFirst, InFlightSecond float64
}

// LoadTrend measures the trend over the measured window of info.
func (a *Aggregate) LoadTrend(info RunInfo) LoadTrend {
	from, to, _ := a.window(info)
	if to <= from {
		return LoadTrend{}
	}
	mid := from + (to-from)/2
	t := LoadTrend{WindowS: float64(to-from) / 1e6}
	a.load.m.each(from, to, func(f float64, v []float64) {
		t.Issued += f * v[slotIssued]
		t.Completed += f * v[slotDone]
	})
	t.InFlightFirst = a.inFlight(from, mid)
	t.InFlightSecond = a.inFlight(mid, to)
	return t
}

// inFlight is the mean number of requests in flight over [from, to).
func (a *Aggregate) inFlight(from, to int64) float64 {
	if to <= from {
		return 0
	}
	var busy float64
	a.load.m.each(from, to, func(f float64, v []float64) { busy += f * v[slotBusyUS] })
	return busy / float64(to-from)
}
