package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/inferload/inferload/record"
)

// configTable is one configuration's figures as a Markdown table.
func configTable(o *outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %s\n\n| figure | value |\n|---|---|\n", configName(o))
	row := func(k, f string, a ...any) { fmt.Fprintf(&b, "| %s | %s |\n", k, fmt.Sprintf(f, a...)) }
	a := o.Agreement
	row("workload", "%d-token prompts, %d output tokens, chat; %s", o.Workload.Input, o.Workload.Output, loopText(o.Mode))
	row("TTFT − server prompt_ms (1 user)", "p50 %.2f ms, p99 %.2f ms", a.OutsideP50MS, a.OutsideP99MS)
	row("TPOT vs server's", "median %.2f%%, max %.2f%% (%d requests)", a.TPOTErrMedian*100, a.TPOTErrMax*100, a.Timed)
	u := o.OneUser
	row("one user", "TTFT p90 %.0f ms, E2E p50 %.0f ms, %.2f requests/s", u.TTFTP90MS, u.E2EP50MS, u.RequestsPerS)
	row("SLO (one user's TTFT p90 + 1.5 × its E2E p50)", "%s", o.SLO)
	row("find-capacity", "%s … %s, %s probes: %s", o.load(o.Search.Low), o.load(o.Search.High), o.Probe, o.Capacity.Reason)
	if len(o.AtAnswer) > 0 {
		row("holds at the answer", "%s", verdicts(o.AtAnswer, o, true))
		row("breaks above (+25%, rounded up to a whole user)", "%s", verdicts(o.Above, o, false))
		row("samples per rerun", "%s (%s runs)", sampleRange(append(slices.Clone(o.AtAnswer), o.Above...)), o.Rerun)
	}
	row("wall time", "%s", o.Wall.Round(time.Second))
	return b.String()
}

// verdicts is "k/N" of runs holding (or breaking) the SLO, with each
// run's p90 and how many the probe rule passes.
func verdicts(runs []rerun, o *outcome, holding bool) string {
	k := count(runs, func(r rerun) bool { return r.holds(o.SLO) == holding })
	var p90s []string
	for _, r := range runs {
		p90s = append(p90s, fmt.Sprintf("%.0f", r.TTFTP90MS))
	}
	return fmt.Sprintf("**%d/%d** at %s (TTFT p90 ms: %s; find-capacity's rule passes %d/%d; invalid %d)",
		k, len(runs), o.load(runs[0].Load), strings.Join(p90s, ", "),
		count(runs, func(r rerun) bool { return r.Confident }), len(runs), count(runs, func(r rerun) bool { return !r.Valid }))
}

func sampleRange(runs []rerun) string {
	lo, hi := runs[0].Samples, runs[0].Samples
	for _, r := range runs {
		lo, hi = min(lo, r.Samples), max(hi, r.Samples)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// summaryTable is every configuration on one row each.
func summaryTable(outs []*outcome) string {
	var b strings.Builder
	b.WriteString("\n| configuration | TTFT − prompt_ms p50 | TPOT err median | SLO | answer | holds at answer | breaks above (+25%, rounded up to a whole user) | wall |\n|---|---|---|---|---|---|---|---|\n")
	for _, o := range outs {
		holds, breaks := "—", "—"
		if len(o.AtAnswer) > 0 {
			holds = fmt.Sprintf("%d/%d", count(o.AtAnswer, func(r rerun) bool { return r.holds(o.SLO) }), len(o.AtAnswer))
			breaks = fmt.Sprintf("%d/%d", count(o.Above, func(r rerun) bool { return !r.holds(o.SLO) }), len(o.Above))
		}
		fmt.Fprintf(&b, "| %s | %.2f ms | %.2f%% | %s | %s | %s | %s | %s |\n", configName(o), o.Agreement.OutsideP50MS,
			o.Agreement.TPOTErrMedian*100, o.SLO, o.load(o.Capacity.Load), holds, breaks, o.Wall.Round(time.Second))
	}
	return b.String()
}

func configName(o *outcome) string {
	return fmt.Sprintf("%s, %d slot%s, %d thread", o.Config.Model, o.Config.Slots, plural(o.Config.Slots), o.Config.Threads)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (o *outcome) load(v float64) string { return record.LoadText(v, o.Mode) }

func loopText(mode string) string {
	if mode == record.ModeClosed {
		return "closed loop (users)"
	}
	return "open loop, Poisson arrivals"
}
