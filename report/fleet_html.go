package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/inferload/inferload/record"
)

// WriteFleetHTML writes `inferload fleet`'s answer as a self-contained
// page: the answer and its cost, the replica curve (every size simulated,
// the answer marked), and the scale-out's windows when there is one.
func WriteFleetHTML(w io.Writer, f *record.Fleet) error {
	p := &page{
		Title: "inferload fleet: " + f.Profile,
		Subtitle: fmt.Sprintf("%s behind a %s router · %.0f s simulated per size after %.0f s of warm-up",
			record.LoadText(f.Load, f.Mode), f.Router, f.WindowS, f.WarmupS),
		CSS: template.CSS(uplotCSS + reportCSS),
		JS:  template.JS(uplotJS + "\n" + reportJS),
	}
	for _, sec := range []*section{fleetAnswerSection(f), fleetRoutersSection(f.Routers), fleetCurveSection(f), fleetColdStartSection(f.ColdStart, f.Shown)} {
		if sec != nil {
			p.Sections = append(p.Sections, sec)
			p.Data.Charts = append(p.Data.Charts, sec.Charts...)
		}
	}
	p.Data.Marks = []annotation{}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return fmt.Errorf("fleet html: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func fleetAnswerSection(f *record.Fleet) *section {
	answer := "none"
	if f.Replicas > 0 {
		answer = fmt.Sprint(f.Replicas)
	}
	sec := &section{ID: "answer", Title: "Answer",
		Help: "The fewest replicas at which every SLO held at the planned load (peak plus headroom), judged as find-capacity judges a probe.",
		Cards: []card{
			{Label: "replicas", Value: answer, Detail: f.Profile},
			{Label: "planned load", Value: record.LoadText(f.Load, f.Mode), Detail: fmt.Sprintf("peak %s + %.0f%%", record.LoadText(f.Peak, f.Mode), f.Headroom*100)},
			{Label: "SLOs", Value: strings.Join(f.SLOs, ", "), Detail: fmt.Sprintf("%.0f%% confidence, failures ≤ %.2f%%", f.Confidence*100, f.MaxFailureRate*100)},
		},
		Notes: []string{f.Reason}}
	if f.PerReplica > 0 {
		sec.Cards = append(sec.Cards, card{Label: "one replica carries", Value: record.LoadText(f.PerReplica, f.Mode), Detail: "the search's starting estimate"})
	}
	if f.CostPerHour > 0 {
		sec.Cards = append(sec.Cards, card{Label: "cost", Value: fmt.Sprintf("%.2f / hour", f.CostPerHour),
			Detail: fmt.Sprintf("%.3f per million output tokens", f.CostPerMillionTokens)})
	}
	return sec
}

// fleetRoutersSection is the comparison of routers, one row each.
func fleetRoutersSection(rows []record.FleetRouter) *section {
	if len(rows) == 0 {
		return nil
	}
	t := table{Head: []string{"router", "replicas", rows[0].Figure + " ms", "prefix-cache hits", "why"}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Router, fleetRouterReplicas(r), formatMS(r.FigureMS),
			fmt.Sprintf("%.1f%%", r.PrefixHitShare*100), r.Reason})
	}
	return &section{ID: "routers", Title: "Routers compared",
		Help:   "The same question behind each router: the fewest replicas meeting every SLO at the planned load, the first SLO's figure at that size (the largest size tried when none passed), and the share of prompt tokens the replicas' prefix caches served.",
		Tables: []table{t}}
}

// fleetCurveSection is the replica curve: latency and failures against
// fleet size, the answer marked, and each size's verdict with reasons.
func fleetCurveSection(f *record.Fleet) *section {
	if len(f.Probes) == 0 {
		return nil
	}
	var x []float64
	var ttft, tpot, e2e, fail, util []*float64
	names, at := f.Shown.Columns()
	t := table{Head: []string{"replicas", "req/s", "output tok/s", names[0] + " ms", names[1] + " ms", names[2] + " ms", "failure %", "busy mean / max", "SLOs", "why"}}
	for _, p := range f.Probes {
		x = append(x, float64(p.Replicas))
		lat := at(p.Metrics)
		ttft, tpot, e2e = append(ttft, gap(lat[0])), append(tpot, gap(lat[1])), append(e2e, gap(lat[2]))
		fail, util = append(fail, ptr(p.FailureRate*100)), append(util, ptr(p.Utilisation*100))
		verdict := "missed"
		if p.Passed {
			verdict = "met"
		}
		t.Rows = append(t.Rows, []string{fmt.Sprint(p.Replicas), fmt.Sprintf("%.2f", p.Throughput.RequestsPerS),
			fmt.Sprintf("%.0f", p.Throughput.OutputTokensPerS), formatMS(lat[0]), formatMS(lat[1]),
			formatMS(lat[2]), fmt.Sprintf("%.2f", p.FailureRate*100),
			fmt.Sprintf("%.0f%% / %.0f%%", p.Utilisation*100, p.MaxUtilisation*100), verdict, strings.Join(p.Reasons, "; ")})
	}
	var marks []annotation
	if f.Replicas > 0 {
		marks = []annotation{{T: float64(f.Replicas), Label: "answer"}}
	}
	lat := chart{ID: "fleet-latency", Kind: "curve", Title: "Tail latency against fleet size", X: x, XLabel: "replicas",
		YLabel: "ms", VMarks: marks, Series: []line{{Label: names[0], Values: ttft, Color: "#4c78a8"},
			{Label: names[1], Values: tpot, Color: "#b279a2"}, {Label: names[2], Values: e2e, Color: "#f58518"}}}
	load := chart{ID: "fleet-load", Kind: "curve", Title: "Failures and busy share against fleet size", X: x, XLabel: "replicas",
		YLabel: "%", VMarks: marks, Series: []line{{Label: "failure rate %", Values: fail, Color: "#e45756"},
			{Label: "busy (mean) %", Values: util, Color: "#54a24b"}}}
	return &section{ID: "curve", Title: "Replica curve",
		Help:   "Every fleet size the search simulated at the planned load; the answer is marked. The size below the answer was simulated and failed.",
		Charts: []chart{lat, load}, Tables: []table{t}}
}

// fleetColdStartSection shows the scale-out window by window.
func fleetColdStartSection(c *record.FleetColdStart, shown record.FleetShown) *section {
	if c == nil {
		return nil
	}
	verdict := "the SLOs hold"
	if !c.Passed {
		verdict = "the SLOs are missed"
	}
	var x []float64
	var met, ttft []*float64
	names, at := shown.Columns()
	t := table{Head: []string{"from s", "replicas up", "requests", "met SLOs", names[0] + " ms"}}
	for _, w := range c.Windows {
		v := at(record.Metrics{TTFT: w.TTFT})[0]
		x = append(x, w.StartS)
		met, ttft = append(met, ptr(w.MetShare*100)), append(ttft, gap(v))
		t.Rows = append(t.Rows, []string{fmt.Sprintf("%.0f", w.StartS), fmt.Sprint(w.Replicas), fmt.Sprint(w.Requests),
			fmt.Sprintf("%.0f%%", w.MetShare*100), formatMS(v)})
	}
	ch := chart{ID: "fleet-coldstart", Kind: "curve", Title: "While new replicas start", X: x, XLabel: "seconds (ramp starts at the first window)",
		YLabel: names[0] + " ms", Y2Label: "% met", Series: []line{{Label: names[0], Values: ttft, Color: "#4c78a8"},
			{Label: "met every SLO %", Values: met, Right: true, Color: "#54a24b"}}}
	return &section{ID: "coldstart", Title: "Scaling out",
		Help: fmt.Sprintf("From %d to %d replicas as the load ramps over %.0f s; new replicas up after %.0f s. Judged over %.0f s from the ramp's start: %s.",
			c.From, c.To, c.RampS, c.ColdStartS, c.JudgedS, verdict),
		Notes: c.Reasons, Charts: []chart{ch}, Tables: []table{t}}
}
