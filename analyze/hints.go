package analyze

// This file: the bottleneck hints, rules over the measured window's
// server, GPU and client telemetry (docs/telemetry.md, "Bottleneck hints").

import (
	"fmt"
	"maps"
	"slices"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
)

// Hint thresholds (docs/telemetry.md, "Bottleneck hints").
const (
	// ComputeBoundUtilPct: mean GPU utilisation of a compute-bound run.
	ComputeBoundUtilPct = 90.0
	// ComputeBoundQueueMin: mean requests waiting at the server for a
	// busy, flat server to count as compute bound. A GPU busy with one
	// request is "90% utilised" too, yet more load would add throughput;
	// only a server that has work waiting and still does not go faster
	// is at its limit.
	ComputeBoundQueueMin = 1.0
	// FlatTolerance: throughput whose second half is within this share of
	// its first half has stopped growing.
	FlatTolerance = 0.10
	// MemoryBoundKV: KV-cache use at which preemptions mean memory bound.
	MemoryBoundKV = 0.90
	// SchedulerUtilPct: below this mean GPU utilisation a growing queue is
	// the scheduler's or the batch limit's doing, not the GPU's.
	SchedulerUtilPct = 50.0
	// QueueGrowthFactor: a queue whose second-half mean is this many times
	// its first-half mean (and at least QueueGrowthMin) is growing.
	QueueGrowthFactor = 1.5
	QueueGrowthMin    = 2.0
)

// hintInput is what the rules read: server and GPU samples pooled across
// sources (a value is taken from whichever source carries it), the client
// summary and the run's own figures.
type hintInput struct {
	server []observe.Sample
	s      *record.Summary
	trend  record.LoadTrend
}

// Hints applies each rule, in a fixed order, to the measured window's
// samples (observe.Measured) and to s, whose Client and Requests it reads
// (s.Client is observe.Summarize's); a rule fires only on the figures it
// cites. nil when none fires.
//
// trend is the records' load trend over the measured window (record.
// Aggregate.LoadTrend); the overload rule reads it, so it fires on any
// server, with or without telemetry.
func Hints(measured []observe.Sample, s *record.Summary, trend record.LoadTrend) []record.Hint {
	in := hintInput{s: s, trend: trend}
	bySource := map[string][]observe.Sample{}
	for _, smp := range measured {
		bySource[smp.Source] = append(bySource[smp.Source], smp)
	}
	// Sorted, so float sums run in one order and a rebuild is identical.
	for _, src := range slices.Sorted(maps.Keys(bySource)) {
		if src != "client" {
			in.server = append(in.server, bySource[src]...)
		}
	}
	var out []record.Hint
	for _, rule := range []func(hintInput) *record.Hint{clientBound, overload, computeBound, memoryBound, schedulerLimit, oomRisk, queueDominates, outsideServer, prefixCacheTTFT, prefixReuseLow, accuracyFalls} {
		if h := rule(in); h != nil {
			out = append(out, *h)
		}
	}
	return out
}

// Halves is a series' mean over the first and the second half of its
// samples, by time, so "growing" and "flat" compare like with like. ok is
// false with fewer than 4 samples or an empty half.
func Halves(samples []observe.Sample, name string) (first, second float64, ok bool) {
	var vals []float64
	var lo, hi int64 = 1 << 62, -1
	for _, smp := range samples {
		if _, has := smp.Values[name]; has && !smp.Gap {
			lo, hi = min(lo, smp.TimeUS), max(hi, smp.TimeUS)
		}
	}
	mid := lo + (hi-lo)/2
	var a, b []float64
	for _, smp := range samples {
		if v, has := smp.Values[name]; has && !smp.Gap {
			vals = append(vals, v)
			if smp.TimeUS <= mid {
				a = append(a, v)
			} else {
				b = append(b, v)
			}
		}
	}
	if len(vals) < 4 || len(a) == 0 || len(b) == 0 {
		return 0, 0, false
	}
	return mean(a), mean(b), true
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func clientBound(in hintInput) *record.Hint {
	c := in.s.Client
	if c == nil || !c.Saturated {
		return nil
	}
	return &record.Hint{Rule: "client_bound",
		Message: fmt.Sprintf("client bound: %s; run it on a bigger machine, shard it or raise its in-flight cap before trusting these figures", c.Verdict),
		Figures: map[string]float64{"client_cpu_pct_max": c.CPUPctMax, "client_sched_lag_p99_max_ms": c.SchedLagP99MaxMS, "saturated_seconds": float64(c.SaturatedSeconds)}}
}

// computeBound needs all three of: a busy GPU, flat server throughput
// and requests waiting at the server (ComputeBoundQueueMin). Busy and flat
// alone hold for any steady run (one user on the tiny profile keeps its
// GPU busy, and four users then give 3.4× the throughput); a queue that
// waits while the GPU is busy and throughput does not grow is the limit.
// A server without a queue series is never called compute bound. It
// stays quiet when memoryBound fires: a server preempting for want of KV
// cache is busy and flat too, but its remedy is memory, and two hints for
// one cause would send the reader two ways.
func computeBound(in hintInput) *record.Hint {
	util, _, n := observe.Stat(in.server, observe.GPUUtil)
	queue, _, qn := observe.Stat(in.server, observe.QueueDepth)
	if n == 0 || util < ComputeBoundUtilPct || qn == 0 || queue < ComputeBoundQueueMin || memoryBound(in) != nil {
		return nil
	}
	a, b, ok := Halves(in.server, observe.OutputTokensPerS)
	if !ok || a <= 0 || b > a*(1+FlatTolerance) || b < a*(1-FlatTolerance) {
		return nil
	}
	return &record.Hint{Rule: "compute_bound",
		Message: fmt.Sprintf("compute bound: GPU utilisation averaged %.0f%% with %.1f requests waiting on average while server output throughput stayed flat (%.0f then %.0f tok/s); more load will add latency, not throughput", util, queue, a, b),
		Figures: map[string]float64{"gpu_util_pct_mean": util, "queue_depth_mean": queue, "output_tokens_per_s_first_half": a, "output_tokens_per_s_second_half": b}}
}

func memoryBound(in hintInput) *record.Hint {
	_, kv, n := observe.Stat(in.server, observe.KVCacheUsage)
	pMean, pMax, pn := observe.Stat(in.server, observe.PreemptionsPerS)
	if n == 0 || pn == 0 || kv < MemoryBoundKV || pMax <= 0 {
		return nil
	}
	return &record.Hint{Rule: "memory_bound",
		Message: fmt.Sprintf("memory bound: KV cache reached %.0f%% and the server preempted requests (up to %.1f/s, mean %.2f/s); fewer concurrent sequences, shorter contexts or more KV memory would help", 100*kv, pMax, pMean),
		Figures: map[string]float64{"kv_cache_usage_max": kv, "preemptions_per_s_max": pMax, "preemptions_per_s_mean": pMean}}
}

func schedulerLimit(in hintInput) *record.Hint {
	a, b, ok := Halves(in.server, observe.QueueDepth)
	util, _, n := observe.Stat(in.server, observe.GPUUtil)
	if !ok || n == 0 || b < QueueGrowthMin || b < a*QueueGrowthFactor || util >= SchedulerUtilPct {
		return nil
	}
	return &record.Hint{Rule: "scheduler_limit",
		Message: fmt.Sprintf("scheduler/batching limit: the queue grew (mean %.1f then %.1f waiting) while GPU utilisation averaged only %.0f%%; check max_num_seqs / max batch size", a, b, util),
		Figures: map[string]float64{"queue_depth_first_half": a, "queue_depth_second_half": b, "gpu_util_pct_mean": util}}
}

func oomRisk(in hintInput) *record.Hint {
	_, frac, n := observe.Stat(in.server, observe.GPUMemUsedFrac)
	if n == 0 || frac < observe.OOMRiskFrac || in.s.Requests.Failed == 0 {
		return nil
	}
	return &record.Hint{Rule: "oom_risk",
		Message: fmt.Sprintf("OOM risk: %d requests failed while GPU memory was %.1f%% used; the failures may be out-of-memory errors", in.s.Requests.Failed, 100*frac),
		Figures: map[string]float64{"gpu_mem_used_frac_max": frac, "failed": float64(in.s.Requests.Failed), "failure_rate": in.s.FailureRate}}
}
