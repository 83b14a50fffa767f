package record

// Tally holds the aggregate's counts that no summary.json figure shows but
// the warnings cite (analyze.Warnings). It is not written to summary.json:
// a rebuild recounts it from the records, so live and rebuilt summaries
// still agree.
type Tally struct {
	// NonStreamed counts measured successes that were not streamed (no
	// TTFT, ITL or TPOT for them).
	NonStreamed int64
	// OpenLoop counts measured open-loop requests; Requests.Late of them
	// started late.
	OpenLoop int64
	// WarmupFailed counts warm-up requests that failed.
	WarmupFailed int64
	// Clamped counts latency values outside 0 to 1 h that were clamped
	// into that range.
	Clamped int64
	// Drained is true when load was offered for under a second, so the
	// window runs to the last reply, drain included.
	Drained bool
}

func (a *Aggregate) tally(drained bool) Tally {
	return Tally{NonStreamed: a.nonStream, OpenLoop: a.openLoop, WarmupFailed: a.warmupFailed,
		Clamped: a.clamped(), Drained: drained}
}
