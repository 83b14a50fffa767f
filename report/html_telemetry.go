package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
)

// diagnosisSection opens the report: whether the load generator kept up
// (if it did not, every other figure may be the client's) and the
// bottleneck hints with the figures behind them.
func diagnosisSection(in *HTMLInput) *section {
	s := in.Summary
	verdicts := stepVerdicts(s)
	if s.Client == nil && len(s.Hints) == 0 && s.ClientReads == nil && s.Connections == nil && len(verdicts) == 0 {
		return nil
	}
	sec := &section{ID: "diagnosis", Title: "Diagnosis",
		Help: "Read this first. A sweep's answer (where to run, the knee) leads. A saturated load generator makes every figure below suspect. Hints come from the documented rules in docs/telemetry.md and cite the figures that triggered them."}
	sec.Notes = append(sec.Notes, verdicts...)
	if c := s.Client; c != nil {
		v := verdict{Passed: !c.Saturated, Expr: "load generator not saturated", Detail: c.Verdict}
		if c.Saturated {
			v.Expr = "CLIENT SATURATED: results may be invalid"
		}
		sec.Verdicts = append(sec.Verdicts, v)
	}
	if cr := s.ClientReads; cr != nil {
		sec.Notes = append(sec.Notes, "Token clock: "+ClockLine(cr)+" (docs/metrics.md#two-clocks-for-arrivals).")
	}
	if c := s.Connections; c != nil {
		sec.Notes = append(sec.Notes, "Connections: "+ConnectionsLine(c)+".")
	}
	if len(s.Hints) > 0 {
		t := table{Caption: "bottleneck hints", Head: []string{"rule", "hint", "figures"}}
		for _, h := range s.Hints {
			t.Rows = append(t.Rows, []string{h.Rule, h.Message, figures(h.Figures)})
		}
		sec.Tables = append(sec.Tables, t)
	} else {
		sec.Notes = append(sec.Notes, "No bottleneck hint fired: no documented rule matched the server, GPU and client figures.")
	}
	return sec
}

// figures lists a hint's figures by name, in a stable order.
func figures(f map[string]float64) string {
	parts := make([]string, 0, len(f))
	for _, k := range slices.Sorted(maps.Keys(f)) {
		parts = append(parts, k+" = "+num(f[k]))
	}
	return strings.Join(parts, " · ")
}

// telemetryChart is one chart drawn from one telemetry source: the series
// it plots, each scaled (a 0..1 share becomes %) and on the left or the
// right axis.
type telemetryChart struct {
	key, title, ylabel, y2label string
	lines                       []telemetryLine
}

type telemetryLine struct {
	series, label, color string
	scale                float64
	right                bool
}

// serverCharts are the server and GPU timelines, in display order.
var serverCharts = []telemetryChart{
	{"queue", "Queue and running batch", "requests", "KV cache %", []telemetryLine{
		{observe.QueueDepth, "waiting", "#e45756", 1, false},
		{observe.RunningBatch, "running", "#4c78a8", 1, false},
		{observe.KVCacheUsage, "KV cache %", "#b279a2", 100, true}}},
	{"preempt", "Preemptions and KV cache", "preemptions/s", "KV cache %", []telemetryLine{
		{observe.PreemptionsPerS, "preemptions/s", "#e45756", 1, false},
		{observe.KVCacheUsage, "KV cache %", "#b279a2", 100, true}}},
	{"srvlat", "Server-side latency (from its histograms)", "ms", "", []telemetryLine{
		{observe.ServerTTFT + "_p99_ms", "TTFT p99", "#4c78a8", 1, false},
		{observe.ServerTTFT + "_p50_ms", "TTFT p50", "#72b7b2", 1, false},
		{observe.ServerITL + "_p99_ms", "ITL p99", "#f58518", 1, false},
		{observe.ServerQueueTime + "_p99_ms", "queue time p99", "#e45756", 1, false}}},
	{"gpu", "GPU", "%", "W", []telemetryLine{
		{observe.GPUUtil, "utilisation %", "#54a24b", 1, false},
		{observe.GPUMemUsedFrac, "memory used %", "#4c78a8", 100, false},
		{observe.GPUPowerW, "power W", "#f58518", 1, true}}},
}

// clientCharts are the load generator's own timelines.
var clientCharts = []telemetryChart{
	{"cpu", "Load generator CPU and scheduling lag", "CPU %", "ms", []telemetryLine{
		{observe.ClientCPUPct, "CPU % of its CPUs", "#4c78a8", 1, false},
		{observe.ClientSchedLagP99, "scheduling lag p99", "#e45756", 1, true},
		{observe.ClientPacerLagMS, "pacer lag", "#f58518", 1, true}}},
	{"mem", "Load generator memory and goroutines", "MiB", "goroutines", []telemetryLine{
		{observe.ClientRSSMiB, "RSS MiB", "#54a24b", 1, false},
		{observe.ClientGoroutines, "goroutines", "#b279a2", 1, true}}},
}

// serverTelemetrySection draws what each scraped server, exporter and the
// local GPUs showed, second by second, on the run clock.
func serverTelemetrySection(in *HTMLInput) *section {
	sec := &section{ID: "server", Title: "Server and GPU over time",
		Help: "Scraped from the target's /metrics (and DCGM or local GPUs) on the run clock, beside the client figures above. Breaks in a line are scrape gaps; vertical lines are run events."}
	sources := telemetrySources(in.Telemetry)
	n := 0
	for _, src := range sources {
		if src.name != "client" {
			n++
		}
	}
	for i, src := range sources {
		if src.name == "client" {
			continue
		}
		for _, spec := range serverCharts {
			if c, ok := spec.draw(fmt.Sprintf("tel-%d-%s", i, spec.key), src, n > 1); ok {
				sec.Charts = append(sec.Charts, c)
			}
		}
	}
	if len(sec.Charts) == 0 {
		return nil
	}
	sec.Tables = sourceTable(in)
	return sec
}

// clientTelemetrySection draws the load generator's own load: the figures
// behind the saturation verdict.
func clientTelemetrySection(in *HTMLInput) *section {
	sec := &section{ID: "client", Title: "Load generator over time",
		Help: "This process's own CPU (share of the CPUs it may use), scheduling lag and memory. CPU near 100% or lag of tens of milliseconds while busy means the client, not the server, set the pace."}
	for i, src := range telemetrySources(in.Telemetry) {
		if src.name != "client" {
			continue
		}
		for _, spec := range clientCharts {
			if c, ok := spec.draw(fmt.Sprintf("tel-%d-%s", i, spec.key), src, false); ok {
				sec.Charts = append(sec.Charts, c)
			}
		}
	}
	if len(sec.Charts) == 0 {
		return nil
	}
	return sec
}

// sourceTable summarises each scraped source: what it was, how often it
// answered, and how long its scrapes took.
func sourceTable(in *HTMLInput) []table {
	srv := in.Summary.Server
	if srv == nil || len(srv.Sources) == 0 {
		return nil
	}
	t := table{Caption: "sources (measured window)", Head: []string{"source", "kind", "samples", "gaps", "scrape latency max (ms)"}}
	for _, s := range srv.Sources {
		t.Rows = append(t.Rows, []string{s.Source, s.Kind, fmt.Sprint(s.Samples), fmt.Sprint(s.Gaps), ms(s.ScrapeLatencyMaxMS)})
	}
	return []table{t}
}

// telemetrySource is one source's samples in run-clock order.
type telemetrySource struct {
	name    string
	samples []observe.Sample
}

// telemetrySources splits samples by source, in order of first appearance.
func telemetrySources(samples []observe.Sample) []telemetrySource {
	var out []telemetrySource
	at := map[string]int{}
	for _, s := range samples {
		i, ok := at[s.Source]
		if !ok {
			i = len(out)
			at[s.Source] = i
			out = append(out, telemetrySource{name: s.Source})
		}
		out[i].samples = append(out[i].samples, s)
	}
	for i := range out {
		slices.SortStableFunc(out[i].samples, func(a, b observe.Sample) int { return int(a.TimeUS - b.TimeUS) })
	}
	return out
}

// draw builds the chart from one source, or reports that the source
// carries none of its series. A gap sample is a gap in every line.
func (spec telemetryChart) draw(id string, src telemetrySource, named bool) (chart, bool) {
	var lines []telemetryLine
	for _, l := range spec.lines {
		if slices.ContainsFunc(src.samples, func(s observe.Sample) bool { _, ok := s.Values[l.series]; return ok }) {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return chart{}, false
	}
	groups := foldSamples(src.samples, maxPoints)
	c := chart{ID: id, Kind: "time", Title: spec.title, YLabel: spec.ylabel}
	if named {
		c.Title += " · " + src.name
	}
	for _, g := range groups {
		c.X = append(c.X, float64(g[0].TimeUS)/1e6)
	}
	for _, l := range lines {
		vals := make([]*float64, len(groups))
		for i, g := range groups {
			vals[i] = foldValue(g, l.series, l.scale)
		}
		c.Series = append(c.Series, line{Label: l.label, Values: vals, Right: l.right, Color: l.color})
		if l.right {
			c.Y2Label = spec.y2label
		}
	}
	return c, true
}

// foldSamples groups consecutive samples so a long run draws at most n
// points; short runs keep one sample per point.
func foldSamples(samples []observe.Sample, n int) [][]observe.Sample {
	per := (len(samples) + n - 1) / n
	out := make([][]observe.Sample, 0, min(len(samples), n))
	for i := 0; i < len(samples); i += per {
		out = append(out, samples[i:min(i+per, len(samples))])
	}
	return out
}

// foldValue is one point of a line: the worst value of a tail series
// (p99, lag) so a spike is never averaged away, the mean of others; nil
// when every sample of the group is a gap or lacks the series.
func foldValue(group []observe.Sample, series string, scale float64) *float64 {
	worst := strings.Contains(series, "_p99") || strings.Contains(series, "lag")
	var sum, top float64
	n := 0
	for _, s := range group {
		v, ok := s.Values[series]
		if s.Gap || !ok {
			continue
		}
		sum += v
		if n == 0 || v > top {
			top = v
		}
		n++
	}
	if n == 0 {
		return nil
	}
	if worst {
		return ptr(top * scale)
	}
	return ptr(sum / float64(n) * scale)
}

// ClockLine says which clock stamped the token events and, on the kernel
// clock, how late the client read them (summary.json client_reads).
func ClockLine(cr *record.ClientReads) string {
	line := fmt.Sprintf("%s (%d requests kernel-stamped, %d on the user-space clock)", cr.Clock, cr.Kernel, cr.User)
	if cr.Kernel == 0 {
		return line + "; read lag not measured"
	}
	l := cr.ReadLag
	return line + fmt.Sprintf("; read lag p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms", l.P50, l.P90, l.P99, l.Max)
}

// ConnectionsLine says which protocol answered and how many connections
// the requests opened (summary.json connections).
func ConnectionsLine(c *record.Connections) string {
	line := fmt.Sprintf("%s, %d opened", c.Protocol, c.Opened)
	if c.Protocol == record.ProtocolMixed {
		keys := slices.Sorted(maps.Keys(c.Protocols))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %d", k, c.Protocols[k])
		}
		line += " (replies: " + strings.Join(parts, ", ") + ")"
	}
	return line
}
