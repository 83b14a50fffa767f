package observe

import (
	"fmt"
	"math"

	"github.com/inferload/inferload/record"
)

// Summarize fills s.Server, s.Client and s.Hints from a run's samples (in
// telemetry.jsonl order) and adds a warning when the client was saturated.
// It is a pure function of its inputs, so a rebuilt summary is identical.
// Only samples inside the measured window count.
func Summarize(samples []Sample, info record.RunInfo, s *record.Summary) {
	in := measured(samples, info)
	if len(in) == 0 {
		return
	}
	bySource, order := group(in)
	for _, src := range order {
		if src == "client" {
			s.Client = clientSummary(bySource[src])
			continue
		}
		if s.Server == nil {
			s.Server = &record.ServerTelemetry{}
		}
		s.Server.Sources = append(s.Server.Sources, sourceSummary(src, bySource[src]))
	}
	s.Hints = hints(bySource, s)
	if s.Client != nil && s.Client.Saturated {
		s.Warnings = append(s.Warnings, "the load generator was saturated ("+s.Client.Verdict+"): latency and throughput may measure the client, not the server; results may be invalid")
	}
	if w := contentionWarning(in); w != "" {
		s.Warnings = append(s.Warnings, w)
	}
}

// measured keeps the samples of the measured window.
func measured(samples []Sample, info record.RunInfo) []Sample {
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

// stat is one series' mean and max over samples that carry it.
func stat(samples []Sample, name string) (mean, maxV float64, n int) {
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

func clientSummary(samples []Sample) *record.ClientTelemetry {
	c := &record.ClientTelemetry{}
	c.CPUPctMean, c.CPUPctMax, _ = stat(samples, ClientCPUPct)
	_, c.RSSMaxMiB, _ = stat(samples, ClientRSSMiB)
	_, c.GoroutinesMax, _ = stat(samples, ClientGoroutines)
	gcMean, _, gcN := stat(samples, ClientGCPauseMS)
	c.GCPauseTotalMS = gcMean * float64(gcN)
	_, c.GCPauseMaxMS, _ = stat(samples, ClientGCPauseMaxMS)
	_, c.SchedLagP99MaxMS, _ = stat(samples, ClientSchedLagP99)
	_, c.PacerLagMaxMS, _ = stat(samples, ClientPacerLagMS)
	c.BytesInPerSMean, _, _ = stat(samples, ClientBytesInPS)
	c.BytesOutPerSMean, _, _ = stat(samples, ClientBytesOutPS)
	run := newOverRun()
	for _, smp := range samples {
		if run.see(smp) {
			c.Saturated = true
		}
	}
	c.SaturatedSeconds = int64(math.Round(float64(run.totalUS) / 1e6))
	c.Verdict = fmt.Sprintf("not saturated: CPU max %.0f%% of its CPUs, scheduling lag p99 max %.1f ms", c.CPUPctMax, c.SchedLagP99MaxMS)
	if c.Saturated {
		c.Verdict = fmt.Sprintf("SATURATED for %d s: CPU max %.0f%% of its CPUs (limit %.0f%%), scheduling lag p99 max %.1f ms (limit %.0f ms while busy)",
			c.SaturatedSeconds, c.CPUPctMax, SaturationCPUPct, c.SchedLagP99MaxMS, SaturationLagMS)
	}
	return c
}

// contentionWarning notes lag the client did not cause: goroutines waited
// for a CPU while the client was mostly idle, so other processes held it.
// The results stand, but each timing may carry up to that much delay.
func contentionWarning(samples []Sample) string {
	var worst float64
	n := 0
	for _, smp := range samples {
		if smp.Source == "client" && contended(smp) {
			worst = max(worst, smp.Values[ClientSchedLagP99])
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("the host was busy with other work: in %d client samples goroutines waited up to %.0f ms (p99) for a CPU while the load generator used under %.0f%% of its CPUs; timings may carry that much client-side delay", n, worst, SaturationLagCPUPct)
}
