package analyze

// This file: the truth suite's rows for the capacity search and soak
// drift, each against a truth known by construction.

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/inferload/inferload/record"
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
		budget := probes >= c.o.Budget()
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
				c.o.Budget(), c.capacity),
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

// serverTimeScenarios are the server-time hints on summaries whose
// server_time is planted: a server whose median request waits 1.2 s in
// its queue against 1 s of work, one that works longer than it waits,
// llama.cpp at 8 users on 4 slots (864 ms of a 900 ms TTFT before prefill,
// no queue reported), and one with little time outside.
func serverTimeScenarios() []TruthRow {
	queue := func(v float64) *record.Stats { return &record.Stats{Count: 200, P50: v} }
	cases := []struct {
		scenario, truth, want string
		st                    record.ServerTimeSummary
		ttft                  float64
	}{
		{"server queue 1.2 s against 80 ms prefill + 900 ms decode", "queueing dominates", "queue_dominates",
			record.ServerTimeSummary{Requests: 200, QueueMS: queue(1200), PrefillMS: record.Stats{P50: 80}, DecodeMS: record.Stats{P50: 900}}, 1290},
		{"server queue 700 ms against 980 ms of work", "busy working, not queueing: no hint", "",
			record.ServerTimeSummary{Requests: 200, QueueMS: queue(700), PrefillMS: record.Stats{P50: 80}, DecodeMS: record.Stats{P50: 900}}, 790},
		{"llama.cpp 8 users on 4 slots: 864 ms of 900 ms TTFT before prefill", "time outside the server (slot wait)", "outside_server",
			record.ServerTimeSummary{Requests: 200, PrefillMS: record.Stats{P50: 36}, DecodeMS: record.Stats{P50: 2000}, OutsideMS: record.Stats{P50: 864}}, 900},
		{"llama.cpp 1 user: 1.5 ms outside of 38 ms TTFT", "nothing outside: no hint", "",
			record.ServerTimeSummary{Requests: 200, PrefillMS: record.Stats{P50: 36}, DecodeMS: record.Stats{P50: 2000}, OutsideMS: record.Stats{P50: 1.5}}, 38},
	}
	var rows []TruthRow
	for _, c := range cases {
		st := c.st
		s := &record.Summary{ServerTime: &st, Metrics: record.Metrics{TTFT: record.Stats{P50: c.ttft}}}
		var got []string
		for _, h := range Hints(nil, s, record.LoadTrend{}) {
			got = append(got, h.Rule)
		}
		rows = append(rows, TruthRow{Scenario: c.scenario, Truth: c.truth, Verdict: "hints: " + orNone(got),
			Match: (c.want == "" && len(got) == 0) || (len(got) == 1 && got[0] == c.want)})
	}
	return rows
}

// prefixCacheScenarios are the prefix_cache_ttft hint on summaries whose
// input buckets carry a planted hit/miss split: a cache that cuts a
// 1 024-token prompt's median TTFT from 420 ms to 95 ms (vLLM with a shared
// 768-token system prompt), one whose hits save 8 ms of 60 (a short shared
// prefix: nothing worth saying), and a cache that thrashes (hits no faster).
func prefixCacheScenarios() []TruthRow {
	cases := []struct {
		scenario, truth, want string
		pc                    record.PrefixCacheSplit
	}{
		{"<=1024 bucket: 300 hits at 95 ms median TTFT, 300 misses at 420 ms", "the prefix cache cuts TTFT", "prefix_cache_ttft",
			record.PrefixCacheSplit{Hits: 300, Misses: 300, HitTTFTP50MS: 95, MissTTFTP50MS: 420}},
		{"<=1024 bucket: hits 52 ms, misses 60 ms (short shared prefix)", "saving too small: no hint", "",
			record.PrefixCacheSplit{Hits: 300, Misses: 300, HitTTFTP50MS: 52, MissTTFTP50MS: 60}},
		{"<=1024 bucket: hits 430 ms, misses 420 ms (cache thrashing)", "hits no faster: no hint", "",
			record.PrefixCacheSplit{Hits: 300, Misses: 300, HitTTFTP50MS: 430, MissTTFTP50MS: 420}},
	}
	var rows []TruthRow
	for _, c := range cases {
		pc := c.pc
		s := &record.Summary{InputBuckets: []record.InputBucket{{Label: "<=1024", Breakdown: record.Breakdown{PrefixCache: &pc}}}}
		var got []string
		for _, h := range Hints(nil, s, record.LoadTrend{}) {
			got = append(got, h.Rule)
		}
		rows = append(rows, TruthRow{Scenario: c.scenario, Truth: c.truth, Verdict: "hints: " + orNone(got),
			Match: (c.want == "" && len(got) == 0) || (len(got) == 1 && got[0] == c.want)})
	}
	return rows
}
