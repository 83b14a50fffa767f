package observe

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/inferload/inferload/record"
)

// Summarize fills s.Server and s.Client from a run's samples (in
// telemetry.jsonl order). It is a pure function of its inputs, so a
// rebuilt summary is identical. Only samples inside the measured window
// (Measured) count. The verdicts on them, hints and warnings, are
// analyze.Diagnose's, which reads s.Client: call it after Summarize.
func Summarize(samples []Sample, info record.RunInfo, s *record.Summary) {
	in := Measured(samples, info)
	if len(in) == 0 {
		return
	}
	bySource, order := group(in)
	for _, src := range order {
		if src == "client" {
			s.Client = clientOfSegments(bySource[src])
			continue
		}
		if s.Server == nil {
			s.Server = &record.ServerTelemetry{}
		}
		s.Server.Sources = append(s.Server.Sources, sourceSummary(src, bySource[src]))
	}
}

// Measured keeps the samples of the measured window, in their order: from
// the warm-up's end to the measured end (the run's end when there is none).
func Measured(samples []Sample, info record.RunInfo) []Sample {
	end := info.MeasureEndUS
	if end <= info.WarmupEndUS {
		end = info.EndUS
	}
	var out []Sample
	for _, smp := range samples {
		if smp.TimeUS >= info.WarmupEndUS && (end <= 0 || smp.TimeUS <= end) {
			out = append(out, smp)
		}
	}
	return out
}

// group splits samples by source, keeping the order sources first appeared.
func group(samples []Sample) (map[string][]Sample, []string) {
	by := map[string][]Sample{}
	var order []string
	for _, smp := range samples {
		if _, ok := by[smp.Source]; !ok {
			order = append(order, smp.Source)
		}
		by[smp.Source] = append(by[smp.Source], smp)
	}
	return by, order
}

func sourceSummary(src string, samples []Sample) record.TelemetrySource {
	ts := record.TelemetrySource{Source: src, Series: map[string]record.SeriesStats{}}
	sums := map[string]float64{}
	counts := map[string]int{}
	for _, smp := range samples {
		ts.Samples++
		ts.ScrapeLatencyMaxMS = max(ts.ScrapeLatencyMaxMS, smp.LatencyMS)
		if smp.Gap {
			ts.Gaps++
			continue
		}
		if smp.Kind != "" {
			ts.Kind = smp.Kind
		}
		for name, v := range smp.Values {
			st, seen := ts.Series[name]
			if !seen || v > st.Max {
				st.Max = v
			}
			st.Last = v
			ts.Series[name] = st
			sums[name] += v
			counts[name]++
		}
	}
	for name, st := range ts.Series {
		st.Mean = sums[name] / float64(counts[name])
		ts.Series[name] = st
	}
	return ts
}

// Stat is one series' mean and max over the samples that carry it (gaps
// excluded), and how many did; all 0 when none did.
func Stat(samples []Sample, name string) (mean, maxV float64, n int) {
	maxV = math.Inf(-1)
	for _, smp := range samples {
		if v, ok := smp.Values[name]; ok && !smp.Gap {
			mean += v
			maxV = max(maxV, v)
			n++
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	return mean / float64(n), maxV, n
}

// clientOfSegments is the client summary of one process, or of a run
// merged from segments: its figures over every segment's samples, and
// saturated when any segment's own client was (each judged on its own
// series, since the saturation rule wants seconds in a row), naming them.
func clientOfSegments(samples []Sample) *record.ClientTelemetry {
	c := clientSummary(samples)
	bySeg := map[string][]Sample{}
	for _, smp := range samples {
		if smp.Segment != "" {
			bySeg[smp.Segment] = append(bySeg[smp.Segment], smp)
		}
	}
	if len(bySeg) == 0 {
		return c
	}
	c.Saturated, c.SaturatedSeconds = false, 0
	for _, seg := range slices.Sorted(maps.Keys(bySeg)) {
		if one := clientSummary(bySeg[seg]); one.Saturated {
			c.Saturated = true
			c.SaturatedSeconds = max(c.SaturatedSeconds, one.SaturatedSeconds)
			c.SaturatedSegments = append(c.SaturatedSegments, seg)
		}
	}
	c.Verdict = fmt.Sprintf("not saturated in any of %d segments: CPU max %.0f%% of its CPUs, scheduling lag p99 max %.1f ms, pacer lag max %.0f ms",
		len(bySeg), c.CPUPctMax, c.SchedLagP99MaxMS, c.PacerLagMaxMS)
	if c.Saturated {
		c.Verdict = fmt.Sprintf("SATURATED in segment %s (of %d) for up to %d s: that machine could not apply its share of the load",
			strings.Join(c.SaturatedSegments, ", "), len(bySeg), c.SaturatedSeconds)
	}
	return c
}

func clientSummary(samples []Sample) *record.ClientTelemetry {
	c := &record.ClientTelemetry{}
	c.CPUPctMean, c.CPUPctMax, _ = Stat(samples, ClientCPUPct)
	_, c.RSSMaxMiB, _ = Stat(samples, ClientRSSMiB)
	_, c.GoroutinesMax, _ = Stat(samples, ClientGoroutines)
	gcMean, _, gcN := Stat(samples, ClientGCPauseMS)
	c.GCPauseTotalMS = gcMean * float64(gcN)
	_, c.GCPauseMaxMS, _ = Stat(samples, ClientGCPauseMaxMS)
	_, c.SchedLagP99MaxMS, _ = Stat(samples, ClientSchedLagP99)
	_, c.PacerLagMaxMS, _ = Stat(samples, ClientPacerLagMS)
	c.BytesInPerSMean, _, _ = Stat(samples, ClientBytesInPS)
	c.BytesOutPerSMean, _, _ = Stat(samples, ClientBytesOutPS)
	run := newOverRun()
	for _, smp := range samples {
		if run.see(smp) {
			c.Saturated = true
		}
	}
	c.SaturatedSeconds = int64(math.Round(float64(run.totalUS) / 1e6))
	c.Verdict = fmt.Sprintf("not saturated: CPU max %.0f%% of its CPUs, scheduling lag p99 max %.1f ms, pacer lag max %.0f ms", c.CPUPctMax, c.SchedLagP99MaxMS, c.PacerLagMaxMS)
	if c.Saturated {
		c.Verdict = fmt.Sprintf("SATURATED for %d s: CPU max %.0f%% of its CPUs (limit %.0f%%), scheduling lag p99 max %.1f ms (limit %.0f ms while busy)",
			c.SaturatedSeconds, c.CPUPctMax, SaturationCPUPct, c.SchedLagP99MaxMS, SaturationLagMS)
	}
	return c
}
