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

// Thresholds of the annotations and the client's saturation verdict,
// documented in docs/telemetry.md (analyze's oom_risk hint reads OOMRiskFrac
// too).
const (
	// SaturationCPUPct: client CPU above this share of the CPUs it may
	// use (GOMAXPROCS) is saturation on its own.
	SaturationCPUPct = 85.0
	// SaturationLagMS: goroutines waited this long (p99) to run. Lag
	// counts only with SaturationLagCPUPct: on a shared host other
	// processes can delay an idle client's goroutines by 100 ms and more
	// (seen at 22% CPU under -race on a busy 2-core machine), which says
	// the host is contended, not that the client ran out of CPU.
	SaturationLagMS = 20.0
	// SaturationLagCPUPct: the least client CPU at which scheduling lag
	// is the client's own doing (so is a backlog of runnable goroutines:
	// see busy).
	SaturationLagCPUPct = 50.0
	// SaturationSeconds: seconds of run clock over a threshold, without a
	// break, before the client counts as saturated (one GC-heavy second is
	// not saturation). Measured in time, not samples, so a faster sampling
	// interval does not make the verdict quicker to trip.
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
	gapped    map[string]bool
	preempt   []float64
	oomSeen   bool
	over      overRun
	saturated bool
}

func newWatcher() *watcher { return &watcher{gapped: map[string]bool{}, over: newOverRun()} }

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
// SaturationSeconds.
func (w *watcher) client(s Sample, ev func(record.EventKind, string, ...any)) {
	if !w.over.see(s) || w.saturated {
		return
	}
	w.saturated = true
	ev(EventClientSaturated, "client CPU %.0f%% of its CPUs, scheduling lag p99 %.1f ms, over a threshold for %.1f s: results may be invalid",
		s.Values[ClientCPUPct], s.Values[ClientSchedLagP99], float64(w.over.runUS)/1e6)
}

// overRun follows how long client samples have been over a threshold
// without a break. Each client sample's figures cover the window since the
// previous one, so a sample adds that window's length.
type overRun struct {
	prevUS  int64 // TimeUS of the previous client sample; -1 before the first
	runUS   int64 // length of the current unbroken run over a threshold
	totalUS int64 // every window over a threshold
}

func newOverRun() overRun { return overRun{prevUS: -1} }

// see takes the next client sample and says whether the current run has
// lasted SaturationSeconds.
func (r *overRun) see(s Sample) bool {
	window := int64(0)
	if r.prevUS >= 0 {
		window = s.TimeUS - r.prevUS
	}
	r.prevUS = s.TimeUS
	if _, known := s.Values[ClientSchedLagP99]; !known && s.Values[ClientCPUPct] < SaturationCPUPct {
		// No scheduling latency was sampled in this window (the runtime
		// records one transition in eight): the window can show neither
		// saturation nor its absence, so it neither extends nor breaks
		// the run, and is not counted.
		return r.runUS >= SaturationSeconds*1e6
	}
	if !clientOver(s) {
		r.runUS = 0
		return false
	}
	r.runUS += window
	r.totalUS += window
	return r.runUS >= SaturationSeconds*1e6
}

// clientOver says one client sample is past a saturation threshold: the
// client used nearly all its CPUs, or its goroutines waited to run while
// the wait was its own doing.
func clientOver(s Sample) bool {
	return s.Values[ClientCPUPct] >= SaturationCPUPct || s.Values[ClientSchedLagP99] >= SaturationLagMS && busy(s)
}

// busy says the client had work for its CPUs: it used at least
// SaturationLagCPUPct of them, or it had a backlog, at least as many
// goroutines waiting to run as it has CPUs. The backlog catches a client
// that wants every CPU but gets few because other processes hold them.
func busy(s Sample) bool {
	procs, ok := s.Values[ClientGOMAXPROCS]
	backlog := ok && procs > 0 && s.Values[ClientRunnable] >= procs
	return s.Values[ClientCPUPct] >= SaturationLagCPUPct || backlog
}

// Contended says one client sample saw scheduling lag past the threshold
// while the client itself was not busy: other processes held the CPU (the
// host-contention warning, analyze.Diagnose).
func Contended(s Sample) bool {
	return s.Values[ClientSchedLagP99] >= SaturationLagMS && !busy(s)
}
