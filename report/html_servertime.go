package report

import (
	"fmt"
	"sort"

	"github.com/inferload/inferload/record"
)

// The phases of the "Where the time went" chart, bottom to top of a bar,
// and their colours.
var serverPhases = []struct {
	label, color string
	of           func(*record.ServerTimeSummary) *record.Stats
}{
	{"queue", "#c0392b", func(st *record.ServerTimeSummary) *record.Stats { return st.QueueMS }},
	{"wait (inferred)", "#e59866", func(st *record.ServerTimeSummary) *record.Stats { return st.WaitMS }},
	{"prefill", "#2e86c1", func(st *record.ServerTimeSummary) *record.Stats { return &st.PrefillMS }},
	{"decode", "#27ae60", func(st *record.ServerTimeSummary) *record.Stats { return &st.DecodeMS }},
	{"outside the server", "#8e8e8e", outsideShown},
}

// outsideShown is the time outside the server as the chart stacks it:
// with an inferred wait beside it, only the floor the wait was measured
// from (network and HTTP), so the wait is not stacked twice.
func outsideShown(st *record.ServerTimeSummary) *record.Stats {
	if st.WaitMS == nil {
		return &st.OutsideMS
	}
	f := st.OutsideFloorMS
	return &record.Stats{Count: st.WaitMS.Count, Mean: f, Min: f, P50: f, P90: f, P95: f, P99: f, P999: f, Max: f}
}

// serverPercentiles are the bars of each class: P50, P90, P99.
var serverPercentiles = []struct {
	label string
	of    func(record.Stats) float64
}{
	{"p50", func(s record.Stats) float64 { return s.P50 }},
	{"p90", func(s record.Stats) float64 { return s.P90 }},
	{"p99", func(s record.Stats) float64 { return s.P99 }},
}

// serverTimeSection is "Where the time went": per class, a bar for each of
// P50, P90 and P99 stacking the server's queue, prefill and decode and the
// time outside the server (summary.json server_time), with the figures in
// a table beside it. Absent when no reply carried server timings.
func serverTimeSection(in *HTMLInput) *section {
	groups := serverTimeGroups(in.Summary)
	if len(groups) == 0 {
		return nil
	}
	sec := &section{ID: "server-time", Title: "Where the time went",
		Help: "The server's own account of each request (in-band timings or OTLP spans), per class: each bar stacks the phases' own percentiles, " +
			"so its height is not that percentile of the whole request (the slowest queue and the slowest decode are rarely the same request). " +
			"Outside the server is the client's time to first token less the server's queue and prefill: network, gateway, HTTP threads."}
	c := chart{ID: "server-time-bars", Kind: "stack", Title: "Server time by phase, per class and percentile", XLabel: "class · percentile", YLabel: "ms"}
	t := table{Caption: "milliseconds (p50 / p90 / p99)", Head: []string{"class", "requests", "queue", "wait (inferred)", "prefill", "decode", "outside the server"}}
	for _, ph := range serverPhases {
		c.Series = append(c.Series, line{Label: ph.label, Color: ph.color})
	}
	for _, g := range groups {
		row := []string{g.name, fmt.Sprintf("%d", g.st.Requests)}
		for _, ph := range serverPhases {
			row = append(row, pctText(ph.of(g.st)))
		}
		t.Rows = append(t.Rows, row)
		for _, pc := range serverPercentiles {
			c.X = append(c.X, float64(len(c.X)))
			c.Labels = append(c.Labels, g.name+" "+pc.label)
			for k, ph := range serverPhases {
				c.Series[k].Values = append(c.Series[k].Values, barValue(ph.of(g.st), pc.of))
			}
		}
	}
	if st := in.Summary.ServerTime; st != nil && st.WaitMS != nil {
		sec.Notes = append(sec.Notes, fmt.Sprintf("The server reports no queue time (llama.cpp): the wait before it began a request is inferred "+
			"as its time outside the server beyond the least of the run, %s ms (the network and HTTP floor: a request that found the server free). "+
			"A run in which no request found the server free understates it.", ms(st.OutsideFloorMS)))
	}
	sec.Charts = []chart{c}
	sec.Tables = []table{t}
	return sec
}

// serverTimeGroup is one class's server time (or the run's, named "all").
type serverTimeGroup struct {
	name string
	st   *record.ServerTimeSummary
}

// serverTimeGroups are the classes with server time, by name; a run with
// only the default class shows its overall figures as "all".
func serverTimeGroups(s *record.Summary) []serverTimeGroup {
	if s.ServerTime == nil {
		return nil
	}
	if len(s.Classes) <= 1 {
		return []serverTimeGroup{{"all", s.ServerTime}}
	}
	var out []serverTimeGroup
	for name, b := range s.Classes {
		if b != nil && b.ServerTime != nil {
			out = append(out, serverTimeGroup{name, b.ServerTime})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// barValue is one phase's percentile as a bar segment: nil (no segment)
// when the phase is not reported, never below 0.
func barValue(st *record.Stats, of func(record.Stats) float64) *float64 {
	if st == nil || st.Count == 0 {
		return nil
	}
	v := max(of(*st), 0)
	return &v
}

// pctText is "p50 / p90 / p99" of one phase, "-" when not reported.
func pctText(st *record.Stats) string {
	if st == nil || st.Count == 0 {
		return "-"
	}
	return ms(st.P50) + " / " + ms(st.P90) + " / " + ms(st.P99)
}
