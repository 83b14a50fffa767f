package observe

import (
	"fmt"

	"github.com/inferload/inferload/record"
)

// Automatic annotation kinds written to events.jsonl beside the engine's.
const (
	// EventScrapeGap: a source stopped answering; Message names it and why.
	EventScrapeGap record.EventKind = "scrape_gap"
	// EventScrapeRecovered: a source that had a gap answers again.
	EventScrapeRecovered record.EventKind = "scrape_recovered"
	// EventPreemptionSpike: the server preempted requests (KV cache full)
	// at a rate well above its recent level.
	EventPreemptionSpike record.EventKind = "preemption_spike"
	// EventOOMRisk: GPU memory reached OOMRiskFrac of its total.
	EventOOMRisk record.EventKind = "oom_risk"
	// EventClientSaturated: the load generator crossed a saturation
	// threshold; figures from then on may be the client's, not the server's.
	EventClientSaturated record.EventKind = "client_saturated"
	// EventErrorBurst: many requests failed within one second.
	EventErrorBurst record.EventKind = "error_burst"
)

// Thresholds of the annotations and hints, documented in docs/telemetry.md.
const (
	// SaturationCPUPct: client CPU above this share of all cores.
	SaturationCPUPct = 85.0
	// SaturationLagMS: goroutines waited this long (p99) to run.
	SaturationLagMS = 20.0
	// SaturationSeconds: seconds over a threshold before the client counts
	// as saturated (one GC-heavy second is not saturation).
	SaturationSeconds = 3
	// OOMRiskFrac: GPU memory used ÷ total at which OOM is near.
	OOMRiskFrac = 0.95
	// PreemptionSpikeFactor: preemptions/s this many times the mean of the
	// preceding samples (and at least 1/s) is a spike.
	PreemptionSpikeFactor = 3.0
	// ErrorBurstMin: failures in one second that make a burst.
	ErrorBurstMin = 5
)

// watcher turns samples into annotations as they arrive.
type watcher struct {
	gapped      map[string]bool
	preempt     []float64
	oomSeen     bool
	overSeconds int
	saturated   bool
}

func newWatcher() *watcher { return &watcher{gapped: map[string]bool{}} }

func (w *watcher) see(s Sample) []record.Event {
	var out []record.Event
	ev := func(kind record.EventKind, format string, a ...any) {
		out = append(out, record.Event{TimeUS: s.TimeUS, Kind: kind, Message: fmt.Sprintf(format, a...)})
	}
	if s.Gap {
		if !w.gapped[s.Source] {
			ev(EventScrapeGap, "%s: %s", s.Source, s.Error)
		}
		w.gapped[s.Source] = true
		return out
	}
	if w.gapped[s.Source] {
		ev(EventScrapeRecovered, "%s answers again", s.Source)
		w.gapped[s.Source] = false
	}
	if p, ok := s.Values[PreemptionsPerS]; ok {
		if isSpike(w.preempt, p) {
			ev(EventPreemptionSpike, "%.1f preemptions/s (KV cache %.0f%%)", p, 100*s.Values[KVCacheUsage])
		}
		w.preempt = append(w.preempt, p)
	}
	if f, ok := s.Values[GPUMemUsedFrac]; ok && f >= OOMRiskFrac && !w.oomSeen {
		w.oomSeen = true
		ev(EventOOMRisk, "GPU memory %.1f%% used (%.0f of %.0f MiB)", 100*f, s.Values[GPUMemUsedMiB], s.Values[GPUMemTotalMiB])
	}
	if s.Source == "client" {
		w.client(s, ev)
	}
	return out
}

// isSpike compares p with the mean of up to ten preceding samples.
func isSpike(hist []float64, p float64) bool {
	if p < 1 {
		return false
	}
	recent := hist[max(len(hist)-10, 0):]
	if len(recent) == 0 {
		return true
	}
	var sum float64
	for _, v := range recent {
		sum += v
	}
	return p >= PreemptionSpikeFactor*sum/float64(len(recent))
}

// client annotates the first time the client stays saturated for
// SaturationSeconds samples in a row.
func (w *watcher) client(s Sample, ev func(record.EventKind, string, ...any)) {
	if !clientOver(s) {
		w.overSeconds = 0
		return
	}
	w.overSeconds++
	if w.overSeconds >= SaturationSeconds && !w.saturated {
		w.saturated = true
		ev(EventClientSaturated, "client CPU %.0f%% of all cores, scheduling lag p99 %.1f ms for %d s: results may be invalid",
			s.Values[ClientCPUPct], s.Values[ClientSchedLagP99], w.overSeconds)
	}
}

// clientOver says one client sample is past a saturation threshold.
func clientOver(s Sample) bool {
	return s.Values[ClientCPUPct] >= SaturationCPUPct || s.Values[ClientSchedLagP99] >= SaturationLagMS
}
