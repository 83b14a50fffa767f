package record

// Fleet is `inferload fleet`'s answer: the smallest number of replicas of
// one (simulated) server that meets every SLO at a planned load, and the
// fleet sizes simulated on the way (docs/capacity-planning.md).
type Fleet struct {
	// Profile and Router name the simulated server and the router.
	Profile string `json:"profile"`
	Router  string `json:"router"`
	// Mode is ModeClosed (Load in users) or ModeOpen (requests/s).
	Mode string `json:"mode"`
	// Peak is the load asked for; Load = Peak × (1 + Headroom), rounded
	// up to whole users, is what every size was simulated at.
	Peak     float64 `json:"peak"`
	Headroom float64 `json:"headroom"`
	Load     float64 `json:"load"`
	// SLOs, Confidence and MaxFailureRate are the capacity rule applied
	// to each size, as find-capacity applies it to each probe.
	SLOs           []string `json:"slos"`
	Confidence     float64  `json:"confidence"`
	MaxFailureRate float64  `json:"max_failure_rate"`
	// Shown is the percentile each latency column shows: the one an SLO
	// on that metric names, so a "p90 ≤ 500ms" SLO is read beside the
	// p90 it judges (FleetShown).
	Shown FleetShown `json:"shown"`
	// WarmupS and WindowS are each simulation's discarded and measured
	// virtual seconds.
	WarmupS float64 `json:"warmup_s"`
	WindowS float64 `json:"window_s"`
	// PerReplica is the search's starting estimate: the most load one
	// replica carried within the SLOs (0 when not even the least).
	PerReplica float64 `json:"per_replica"`
	// Replicas is the answer, 0 when no size up to the search's bound
	// passed; Reason says why in words.
	Replicas int    `json:"replicas"`
	Reason   string `json:"reason"`
	// Probes are the sizes simulated at Load, smallest first.
	Probes []FleetProbe `json:"probes"`
	// PricePerHour is one replica's price; CostPerHour and
	// CostPerMillionTokens (output tokens) follow for the answer. All 0
	// without a price.
	PricePerHour         float64 `json:"price_per_hour,omitempty"`
	CostPerHour          float64 `json:"cost_per_hour,omitempty"`
	CostPerMillionTokens float64 `json:"cost_per_million_tokens,omitempty"`
	// ColdStart is the scale-out scenario, when asked for.
	ColdStart *FleetColdStart `json:"cold_start,omitempty"`
	// Routers is the comparison of routers, when asked for: each one's
	// answer to the same question (same workload, load and SLOs).
	Routers []FleetRouter `json:"routers,omitempty"`
}

// FleetRouter is one router's answer in a comparison of routers.
type FleetRouter struct {
	Router string `json:"router"`
	// Replicas is the fewest that met every SLO behind this router, 0
	// when none up to the bound did; Reason says why in words.
	Replicas int    `json:"replicas"`
	Reason   string `json:"reason"`
	// Figure names the first SLO's metric at its percentile ("TTFT p99")
	// and FigureMS is its value at Replicas (at the largest size tried
	// when none passed), over every measured request.
	Figure   string  `json:"figure"`
	FigureMS float64 `json:"figure_ms"`
	// PrefixHitShare is the share of prompt tokens served from the
	// replicas' prefix caches at that size.
	PrefixHitShare float64 `json:"prefix_hit_share"`
}

// FleetShown names the percentile ("p90") of each latency column of a
// fleet's tables.
type FleetShown struct {
	TTFT string `json:"ttft"`
	TPOT string `json:"tpot"`
	E2E  string `json:"e2e"`
}

// ShownFor is the columns for slos: per metric, the percentile of the
// first SLO that bounds it, p99 for a metric no SLO bounds.
func ShownFor(slos []SLO) FleetShown {
	pick := func(bound func(SLO) float64) string {
		for _, s := range slos {
			if bound(s) > 0 && s.Share > 0 {
				if _, ok := PercentileQ(s.Percentile()); ok {
					return s.Percentile()
				}
			}
		}
		return "p99"
	}
	return FleetShown{TTFT: pick(func(s SLO) float64 { return s.TTFTMs }), TPOT: pick(func(s SLO) float64 { return s.TPOTMs }),
		E2E: pick(func(s SLO) float64 { return s.E2EMs })}
}

// Columns are the three latency columns: their names ("TTFT p90") and
// each probe's figures in ms. A fleet written before Shown existed shows
// p99s.
func (f FleetShown) Columns() (names [3]string, at func(Metrics) [3]float64) {
	or99 := func(p string) string {
		if _, ok := PercentileQ(p); ok {
			return p
		}
		return "p99"
	}
	t, tp, e := or99(f.TTFT), or99(f.TPOT), or99(f.E2E)
	names = [3]string{"TTFT " + t, "TPOT " + tp, "E2E " + e}
	return names, func(m Metrics) [3]float64 {
		a, _ := m.TTFT.At(t)
		b, _ := m.TPOT.At(tp)
		c, _ := m.E2E.At(e)
		return [3]float64{a, b, c}
	}
}

// FleetColdStart is a scale-out under a ramp: From replicas serve while
// the load ramps over RampS to the planned one, and To−From more start at
// the ramp's start, each up ColdStartS later.
type FleetColdStart struct {
	From       int     `json:"from"`
	To         int     `json:"to"`
	ColdStartS float64 `json:"cold_start_s"`
	RampS      float64 `json:"ramp_s"`
	// JudgedS is the start-up window the capacity rule judged: from the
	// ramp's start to a minute after the last replica is up; Passed and
	// Reasons are its verdict.
	JudgedS float64  `json:"judged_s"`
	Passed  bool     `json:"passed"`
	Reasons []string `json:"reasons"`
	// Windows are 30 s windows from the ramp's start, by arrival.
	Windows []FleetWindow `json:"windows"`
}

// FleetWindow is one 30 s window of a scale-out.
type FleetWindow struct {
	StartS float64 `json:"start_s"`
	// Replicas are up at the window's start.
	Replicas int `json:"replicas"`
	// Requests arrived in it; MetShare of them met every SLO bound
	// (a failed request meets none).
	Requests int     `json:"requests"`
	MetShare float64 `json:"met_share"`
	// TTFT is the TTFT of its successes, in ms; tables show the
	// percentile Fleet.Shown names.
	TTFT Stats `json:"ttft_ms"`
}

// FleetProbe is one fleet size simulated at the planned load.
type FleetProbe struct {
	Replicas int  `json:"replicas"`
	Passed   bool `json:"passed"`
	// Reasons say per SLO, and for the failure rate, why it held or not.
	Reasons []string `json:"reasons"`
	// The size's figures over its measured window, as a run's summary
	// has them.
	Metrics     Metrics    `json:"metrics"`
	Throughput  Throughput `json:"throughput"`
	FailureRate float64    `json:"failure_rate"`
	// Utilisation is the replicas' mean share of time busy stepping,
	// MaxUtilisation the busiest one's.
	Utilisation    float64 `json:"utilisation"`
	MaxUtilisation float64 `json:"max_utilisation"`
	// PrefixHitShare is the share of the measured requests' prompt tokens
	// (those that reached a replica's first step) that its prefix cache
	// served.
	PrefixHitShare float64 `json:"prefix_hit_share"`
}
