package analyze

// This file: the truth suite's rows for the capacity search and soak
// drift, each against a truth known by construction.

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"time"
)

// capacityScenarios run the capacity search against servers whose true
// capacity is planted: a probe passes exactly when its load is at most
// the capacity. The rule the search states: the answer never exceeds the
// capacity (an overshoot sends users past their SLO), and it is within the
// search's precision of it (10%: the answer is at least capacity ÷ 1.1)
// unless the probe budget ran out first, when the reason gives the
// bracket the capacity lies in.
func capacityScenarios() []TruthRow {
	cases := []struct {
		capacity float64
		o        SearchOptions
	}{
		{13, SearchOptions{Low: 1, High: 256, Whole: true}},
		{64, SearchOptions{Low: 4, High: 256, Whole: true}},
		{200, SearchOptions{Low: 1, High: 512, Whole: true, MaxProbes: 20}},
		{5.5, SearchOptions{Low: 1, High: 64}},
		{37.3, SearchOptions{Low: 0.5, High: 128}},
		{37.3, SearchOptions{Low: 0.5, High: 128, MaxProbes: 20}},
	}
	var rows []TruthRow
	for _, c := range cases {
		var passed, failed []float64
		for {
			load, done := NextLoad(passed, failed, c.o)
			if done {
				break
			}
			if load <= c.capacity {
				passed = append(passed, load)
			} else {
				failed = append(failed, load)
			}
		}
		got := Capacity(passed, failed)
		probes := len(passed) + len(failed)
		budget := probes >= cmp.Or(c.o.MaxProbes, DefaultSearch.MaxProbes)
		lowest := c.capacity / (1 + DefaultSearch.Precision)
		unit := "requests/s"
		if c.o.Whole {
			unit = "users"
		}
		verdict := fmt.Sprintf("%g after %d probes", got, probes)
		if lo, hi := bracket(passed, failed); budget && hi/lo > 1+DefaultSearch.Precision {
			verdict += fmt.Sprintf(" (probe budget spent: capacity in [%g, %g))", lo, hi)
		}
		rows = append(rows, TruthRow{
			Scenario: fmt.Sprintf("capacity search %g–%g %s, %d probes at most, true capacity %g", c.o.Low, c.o.High, unit,
				cmp.Or(c.o.MaxProbes, DefaultSearch.MaxProbes), c.capacity),
			Truth:   fmt.Sprintf("at most %g; at least %.3g unless the probe budget ran out", c.capacity, lowest),
			Verdict: verdict,
			Match:   got <= c.capacity && (got >= lowest-1e-9 || budget),
		})
	}
	return rows
}

// driftScenarios test soak drift on windowed P99s drawn with 5% noise:
// flat series must not drift (the false-drift rate is stated beside
// Alpha), a planted 30% rise must be found. Each row runs 200 series.
func driftScenarios(seed uint64) []TruthRow {
	const series, windows = 200, 12
	span := time.Duration(windows) * 5 * time.Minute
	rate := func(rise float64) float64 {
		rng := rand.New(rand.NewPCG(seed, 11))
		hits := 0
		for range series {
			v := make([]float64, windows)
			for i := range v {
				v[i] = 500 * (1 + rise*float64(i)/float64(windows-1)) * (1 + 0.05*rng.NormFloat64())
			}
			if Drift("P99 TTFT", v, span, DriftOptions{}).Drifted {
				hits++
			}
		}
		return float64(hits) / series
	}
	flat, rise := rate(0), rate(0.30)
	return []TruthRow{
		{Scenario: fmt.Sprintf("soak: flat P99, 5%% noise, %d windows × %d series", windows, series),
			Truth: "no drift (at most Alpha = 5% false)", Verdict: fmt.Sprintf("drifted in %.1f%%", flat*100), Match: flat <= 0.05},
		{Scenario: fmt.Sprintf("soak: P99 rising 30%%, 5%% noise, %d windows × %d series", windows, series),
			Truth: "drift found (at least 90%)", Verdict: fmt.Sprintf("drifted in %.1f%%", rise*100), Match: rise >= 0.90},
	}
}
