package record

// SLOs are a run's objectives: Default for requests of any class, and
// per-class bounds that override it bound by bound (SLO.Over).
type SLOs struct {
	Default SLO
	Classes map[string]SLO
}

// For returns the objective of class (DefaultClass when empty).
func (s *SLOs) For(class string) SLO {
	if s == nil {
		return SLO{}
	}
	if class == "" {
		class = DefaultClass
	}
	return s.Classes[class].Over(s.Default)
}

// Goodput is the part of a run (or of a class or bucket) that met its
// objectives. Definitions in docs/metrics.md#goodput.
type Goodput struct {
	// SLO is the objective applied; for the whole run and for input
	// buckets, which mix classes, the run's default (each request was
	// still judged by its own class's SLO).
	SLO SLO `json:"slo"`
	// Met counts measured successes that met every bound of their class.
	Met int64 `json:"met"`
	// Attainment is Met ÷ (succeeded + failed), 0 when both are 0.
	Attainment float64 `json:"attainment"`
	// RequestsPerS is requests that met their SLO completing inside the
	// measured window ÷ window_s, like throughput.requests_per_s.
	RequestsPerS float64 `json:"requests_per_s"`
}

// sloState is what an aggregate needs to judge goodput: the shared table
// of objectives and its own counts. Children share the root's table.
type sloState struct {
	table *SLOs
	met   int64
	// good meters requests that met their SLO (warm-up included) by
	// completion instant, as throughput is metered. Only a count is
	// needed, so it is a flopMeter of ones: 8 bytes a slot, not 32, which
	// matters in a day-long soak (BENCHMARKS.md, "Soak memory").
	good flopMeter
}

// SetSLOs sets the objectives goodput is judged by (nil: none, every
// success counts). Call it before the first Add.
func (a *Aggregate) SetSLOs(s *SLOs) {
	a.slo.table = s
}

// addGoodput judges r against its class's objective and says whether it
// met it.
func (a *Aggregate) addGoodput(r *Result) bool {
	if !a.slo.table.For(r.Class).Met(r) {
		return false
	}
	a.slo.good.add(r.DoneUS(), 1)
	if !r.Warmup {
		a.slo.met++
	}
	return true
}

// goodput computes the figures over [from, to], judged by slo.
func (a *Aggregate) goodput(slo SLO, from, to int64, windowS float64) Goodput {
	reqs := a.slo.good.over(from, to)
	return Goodput{
		SLO: slo, Met: a.slo.met,
		Attainment:   ratio(a.slo.met, a.succeeded+a.failed),
		RequestsPerS: perSecond(reqs, windowS),
	}
}
