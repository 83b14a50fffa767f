package analyze

import (
	"maps"
	"slices"
	"testing"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
)

// steady builds n one-second samples of source, each with vals(i).
func steady(source string, n int, vals func(i int) map[string]float64) []observe.Sample {
	return steadyEvery(source, n, 1e6, vals)
}

// steadyEvery builds n samples of source everyUS apart, the first at
// everyUS/2.
func steadyEvery(source string, n int, everyUS int64, vals func(i int) map[string]float64) []observe.Sample {
	out := make([]observe.Sample, n)
	for i := range out {
		at := int64(i)*everyUS + everyUS/2
		out[i] = observe.Sample{TS: at / 1e6, TimeUS: at, Source: source, Values: vals(i)}
	}
	return out
}

// TestHints: each rule fires on its planted situation, cites its figures,
// and a healthy run gets no hint at all, through the pipeline the runner
// uses (observe.Summarize, then Diagnose).
func TestHints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		samples []observe.Sample
		failed  int64
		want    []string
	}{
		// GPU busy, requests waiting, throughput flat: compute bound.
		{"compute", steady("srv", 10, func(i int) map[string]float64 {
			return map[string]float64{observe.GPUUtil: 97, observe.QueueDepth: 3, observe.OutputTokensPerS: 1000 + float64(i%2)}
		}), 0, []string{"compute_bound"}},
		// KV cache full and preempting: memory bound.
		{"memory", steady("srv", 10, func(i int) map[string]float64 {
			return map[string]float64{observe.KVCacheUsage: 0.95, observe.PreemptionsPerS: float64(i), observe.GPUUtil: 70, observe.OutputTokensPerS: 100 * float64(i)}
		}), 0, []string{"memory_bound"}},
		// Queue growing while the GPU idles: the scheduler's limit.
		{"scheduler", steady("srv", 10, func(i int) map[string]float64 {
			return map[string]float64{observe.QueueDepth: float64(2 * i), observe.GPUUtil: 30}
		}), 0, []string{"scheduler_limit"}},
		// The client's CPU pegged for the whole run: client bound.
		{"client", steady("client", 10, func(int) map[string]float64 {
			return map[string]float64{observe.ClientCPUPct: 97, observe.ClientSchedLagP99: 40}
		}), 0, []string{"client_bound"}},
		// Failures with GPU memory nearly full: OOM risk.
		{"oom", steady("srv", 10, func(int) map[string]float64 {
			return map[string]float64{observe.GPUMemUsedFrac: 0.99, observe.GPUUtil: 60}
		}), 3, []string{"oom_risk"}},
		// KV full and preempting while the GPU is busy and flat: memory
		// bound only, not compute bound as well.
		{"memory_not_compute", steady("srv", 10, func(i int) map[string]float64 {
			return map[string]float64{observe.KVCacheUsage: 0.97, observe.PreemptionsPerS: 2, observe.GPUUtil: 99, observe.OutputTokensPerS: 500}
		}), 0, []string{"memory_bound"}},
		// Scheduling lag with the client nearly idle: the host was
		// contended, the client was not saturated (warned, not hinted).
		{"contended", steady("client", 10, func(int) map[string]float64 {
			return map[string]float64{observe.ClientCPUPct: 22, observe.ClientSchedLagP99: 117, observe.ClientRunnable: 1, observe.ClientGOMAXPROCS: 2}
		}), 0, nil},
		// Lag with the client busy is the client's own: client bound.
		{"client_lag", steady("client", 10, func(int) map[string]float64 {
			return map[string]float64{observe.ClientCPUPct: 60, observe.ClientSchedLagP99: 40}
		}), 0, []string{"client_bound"}},
		// Little CPU but a backlog of runnable goroutines, five per CPU,
		// with lag: the client wants every CPU and other processes hold
		// them, so it is client bound all the same.
		{"client_backlog", steady("client", 10, func(int) map[string]float64 {
			return map[string]float64{observe.ClientCPUPct: 15, observe.ClientSchedLagP99: 120, observe.ClientRunnable: 10, observe.ClientGOMAXPROCS: 2}
		}), 0, []string{"client_bound"}},
		// Busy and lagging 250 ms samples, every third without a lag
		// figure (no scheduling event sampled): unknown windows neither
		// break nor extend the run, so 3 s of the rest still saturate.
		{"client_lag_unknown", steadyEvery("client", 24, 250_000, func(i int) map[string]float64 {
			if i%3 == 2 {
				return map[string]float64{observe.ClientCPUPct: 45, observe.ClientRunnable: 9, observe.ClientGOMAXPROCS: 2}
			}
			return map[string]float64{observe.ClientCPUPct: 45, observe.ClientSchedLagP99: 90, observe.ClientRunnable: 9, observe.ClientGOMAXPROCS: 2}
		}), 0, []string{"client_bound"}},
		// Three pegged samples 250 ms apart are 0.5 s of saturation, not
		// the 3 s the verdict needs.
		{"brief", steadyEvery("client", 4, 250_000, func(int) map[string]float64 {
			return map[string]float64{observe.ClientCPUPct: 99, observe.ClientSchedLagP99: 40}
		}), 0, nil},
		// A healthy run: moderate utilisation, rising throughput, empty queue.
		{"healthy", append(steady("srv", 10, func(i int) map[string]float64 {
			return map[string]float64{observe.GPUUtil: 60, observe.OutputTokensPerS: 100 * float64(i+1), observe.QueueDepth: 0, observe.KVCacheUsage: 0.3, observe.GPUMemUsedFrac: 0.8}
		}), steady("client", 10, func(int) map[string]float64 {
			return map[string]float64{observe.ClientCPUPct: 20, observe.ClientSchedLagP99: 0.1}
		})...), 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &record.Summary{Requests: record.Requests{Failed: tt.failed}}
			info := record.RunInfo{EndUS: 20e6}
			observe.Summarize(tt.samples, info, s)
			if err := Diagnose(s, Evidence{Samples: tt.samples, Info: info}); err != nil {
				t.Fatal(err)
			}
			var rules []string
			for _, h := range s.Hints {
				rules = append(rules, h.Rule)
				if len(h.Figures) == 0 || h.Message == "" {
					t.Errorf("hint %s cites no figures: %+v", h.Rule, h)
				}
			}
			if !slices.Equal(rules, tt.want) {
				t.Fatalf("hints = %v, want %v (%+v)", rules, tt.want, s.Hints)
			}
			saturated := slices.Contains(tt.want, "client_bound")
			warned := saturated || tt.name == "contended"
			// The telemetry's warnings follow the figures' own.
			telemetry := s.Warnings[len(Warnings(s, Criteria{})):]
			if s.Client != nil && s.Client.Saturated != saturated || warned != (len(telemetry) == 1) {
				t.Errorf("client = %+v, warnings = %v", s.Client, s.Warnings)
			}
		})
	}
}

// hintSeconds is how many one-second samples a constructed series has: the
// first five fall in the first half of the window (mid-point 5.0 s), the
// last five in the second.
const hintSeconds = 10

// const10 is a series that holds vals in every sample.
func const10(vals map[string]float64) []observe.Sample {
	return steady("srv", hintSeconds, func(int) map[string]float64 { return maps.Clone(vals) })
}

// split10 is a series whose name is first in the first half and second in
// the second, the other values held throughout.
func split10(name string, first, second float64, rest map[string]float64) []observe.Sample {
	return steady("srv", hintSeconds, func(i int) map[string]float64 {
		v := maps.Clone(rest)
		if v == nil {
			v = map[string]float64{}
		}
		v[name] = first
		if i >= hintSeconds/2 {
			v[name] = second
		}
		return v
	})
}

// vals is shorthand for a sample's values.
type vals = map[string]float64

// TestHintRules is each rule's truth table on constructed series whose
// truth is known by construction: the series that fire the rule, the ones
// that must not, and both sides of every threshold. The thresholds are the
// rules' own constants (docs/telemetry.md, "Bottleneck hints"); a change to
// one should fail a row here.
func TestHintRules(t *testing.T) {
	t.Parallel()
	const (
		util  = observe.GPUUtil
		tok   = observe.OutputTokensPerS
		kv    = observe.KVCacheUsage
		pre   = observe.PreemptionsPerS
		queue = observe.QueueDepth
		mem   = observe.GPUMemUsedFrac
	)
	saturated := &record.ClientTelemetry{Saturated: true, SaturatedSeconds: 4, CPUPctMax: 97, SchedLagP99MaxMS: 40}
	tests := []struct {
		name    string
		samples []observe.Sample
		failed  int64
		client  *record.ClientTelemetry
		want    []string
		// figures the one hint must cite, exactly (nil: not checked)
		figures map[string]float64
		open    bool             // an open-loop run
		trend   record.LoadTrend // the records' load trend
	}{
		// No telemetry at all: no rule has anything to read.
		{name: "no samples"},

		// client_bound reads only the client verdict observe.Summarize gave.
		{name: "client saturated", client: saturated, want: []string{"client_bound"},
			figures: vals{"client_cpu_pct_max": 97, "client_sched_lag_p99_max_ms": 40, "saturated_seconds": 4}},
		// A client summary that is not saturated earns nothing.
		{name: "client not saturated", client: &record.ClientTelemetry{CPUPctMax: 99}},

		// compute_bound at its edge: mean utilisation exactly 90, flat throughput.
		{name: "compute util at 90", samples: const10(vals{queue: 2, util: 90, tok: 1000}), want: []string{"compute_bound"},
			figures: vals{"gpu_util_pct_mean": 90, "queue_depth_mean": 2, "output_tokens_per_s_first_half": 1000, "output_tokens_per_s_second_half": 1000}},
		// One user keeps the GPU busy and throughput flat, but nothing
		// waits: more load would add throughput (the tiny profile's 1 →
		// 4 users gave 3.4×), so no compute-bound claim.
		{name: "compute busy flat no queue", samples: const10(vals{queue: 0, util: 99, tok: 1000})},
		// Under one request waiting on average: not yet at the limit.
		{name: "compute queue under 1", samples: const10(vals{queue: 0.9, util: 99, tok: 1000})},
		// Busy and flat, but the server exports no queue: no claim.
		{name: "compute no queue series", samples: const10(vals{util: 99, tok: 1000})},
		// Just under 90% busy is not compute bound, however flat.
		{name: "compute util under 90", samples: const10(vals{queue: 2, util: 89.9, tok: 1000})},
		// Throughput up exactly 10% (1000 → 1100) is still flat.
		{name: "compute +10% flat", samples: split10(tok, 1000, 1100, vals{queue: 2, util: 95}), want: []string{"compute_bound"}},
		// Up 10.1% is growing: more load still buys throughput.
		{name: "compute +10.1% growing", samples: split10(tok, 1000, 1101, vals{queue: 2, util: 95})},
		// Down exactly 10% (1000 → 900) is still flat.
		{name: "compute -10% flat", samples: split10(tok, 1000, 900, vals{queue: 2, util: 95}), want: []string{"compute_bound"}},
		// Down 10.1% is falling, not flat.
		{name: "compute -10.1% falling", samples: split10(tok, 1000, 899, vals{queue: 2, util: 95})},
		// No output in the first half: nothing to call flat.
		{name: "compute zero throughput", samples: const10(vals{queue: 2, util: 99, tok: 0})},
		// Busy GPU but no throughput series: the rule cannot cite its figure.
		{name: "compute no throughput series", samples: const10(vals{queue: 2, util: 99})},
		// Flat throughput but no GPU series: no claim about the GPU.
		{name: "compute no gpu series", samples: const10(vals{tok: 1000})},
		// Three samples cannot be split into halves of a trend (at least 4).
		{name: "compute 3 samples", samples: const10(vals{queue: 2, util: 99, tok: 1000})[:3]},
		// Four samples are enough.
		{name: "compute 4 samples", samples: const10(vals{queue: 2, util: 99, tok: 1000})[:4], want: []string{"compute_bound"}},
		// The GPU and the server are separate sources: values pool across them.
		{name: "compute pooled sources", samples: append(
			steady("gpu", hintSeconds, func(int) vals { return vals{util: 97} }),
			steady("srv", hintSeconds, func(int) vals { return vals{queue: 2, tok: 1000} })...),
			want: []string{"compute_bound"}},
		// Gap samples are skipped: a flat series with a dead scrape in each half still fires.
		{name: "compute with gaps", samples: withGaps(const10(vals{queue: 2, util: 97, tok: 1000}), 2, 7), want: []string{"compute_bound"}},

		// memory_bound at its edge: KV exactly 0.90 at its peak, one preemption.
		{name: "memory kv at 0.90", samples: split10(pre, 0, 1, vals{kv: 0.90}), want: []string{"memory_bound"},
			figures: vals{"kv_cache_usage_max": 0.90, "preemptions_per_s_max": 1, "preemptions_per_s_mean": 0.5}},
		// KV just under 0.90: preemptions alone do not make it memory bound.
		{name: "memory kv under 0.90", samples: split10(pre, 0, 1, vals{kv: 0.899})},
		// It is the maximum that counts: one full sample in an otherwise light run.
		{name: "memory kv peak", samples: append(split10(kv, 0.3, 0.3, vals{pre: 2}), observe.Sample{TS: 9, TimeUS: 9_900_000, Source: "srv", Values: vals{kv: 0.95}}),
			want: []string{"memory_bound"}},
		// A full cache without preemptions is a cache doing its job.
		{name: "memory no preemptions", samples: const10(vals{kv: 0.99, pre: 0})},
		// A full cache without a preemption series: nothing to cite.
		{name: "memory no preemption series", samples: const10(vals{kv: 0.99})},
		// Memory bound silences compute bound: one cause, one hint.
		{name: "memory over compute", samples: const10(vals{kv: 0.97, pre: 2, util: 99, tok: 500}), want: []string{"memory_bound"}},

		// scheduler_limit at its edge: the queue grows exactly 1.5× (2 → 3) while the GPU idles.
		{name: "scheduler at 1.5x", samples: split10(queue, 2, 3, vals{util: 40}), want: []string{"scheduler_limit"},
			figures: vals{"queue_depth_first_half": 2, "queue_depth_second_half": 3, "gpu_util_pct_mean": 40}},
		// GPU just under 50%: still too idle to be the cause.
		{name: "scheduler util under 50", samples: split10(queue, 2, 6, vals{util: 49.9}), want: []string{"scheduler_limit"}},
		// Growth under 1.5× (2 → 2.9) is not growing enough.
		{name: "scheduler under 1.5x", samples: split10(queue, 2, 2.9, vals{util: 30})},
		// A queue from nothing to 2 is growing (the minimum is met exactly).
		{name: "scheduler min 2", samples: split10(queue, 0, 2, vals{util: 30}), want: []string{"scheduler_limit"}},
		// From nothing to 1.9: under the minimum, noise rather than a queue.
		{name: "scheduler under min", samples: split10(queue, 0, 1.9, vals{util: 30})},
		// GPU at exactly 50%: the GPU is busy enough to be the cause.
		{name: "scheduler util at 50", samples: split10(queue, 2, 6, vals{util: 50})},
		// A growing queue without a GPU series: the rule cannot tell whose limit it is.
		{name: "scheduler no gpu series", samples: split10(queue, 2, 6, nil)},
		// A shrinking queue is draining, not limited.
		{name: "scheduler shrinking", samples: split10(queue, 6, 2, vals{util: 30})},

		// oom_risk at its edge: memory exactly 0.95 used and a failure.
		{name: "oom at 0.95", samples: const10(vals{mem: 0.95}), failed: 1, want: []string{"oom_risk"},
			figures: vals{"gpu_mem_used_frac_max": 0.95, "failed": 1, "failure_rate": 0}},
		// Memory just under 0.95 with failures: no OOM claim.
		{name: "oom under 0.95", samples: const10(vals{mem: 0.949}), failed: 3},
		// Full memory but nothing failed: a well-packed GPU, not a risk realised.
		{name: "oom no failures", samples: const10(vals{mem: 0.99})},

		// overload: 6/s arrived, 3/s completed over 60 s, in flight 10 → 35
		// (the llama.cpp run of the issue, shaped): fires with its figures.
		{name: "overload", open: true, trend: record.LoadTrend{WindowS: 60, Issued: 360, Completed: 180, InFlightFirst: 10, InFlightSecond: 35},
			want: []string{"overload"}, figures: vals{"issued_per_s": 6, "completed_per_s": 3, "in_flight_first_half": 10, "in_flight_second_half": 35}},
		// The same trend in a closed loop, where arrivals wait for replies: no claim.
		{name: "overload closed loop", trend: record.LoadTrend{WindowS: 60, Issued: 360, Completed: 180, InFlightFirst: 10, InFlightSecond: 35}},
		// Completions 5% behind (a backlog draining at the end): not overload.
		{name: "overload 5% behind", open: true, trend: record.LoadTrend{WindowS: 60, Issued: 400, Completed: 380, InFlightFirst: 2, InFlightSecond: 6}},
		// 12 of 48 behind at 4/s for 12 s is over 10% but within 3 Poisson
		// sigmas (3·√48 ≈ 20.8): ordinary scatter.
		{name: "overload within Poisson", open: true, trend: record.LoadTrend{WindowS: 12, Issued: 48, Completed: 36, InFlightFirst: 2, InFlightSecond: 6}},
		// Behind but in flight steady (a fixed backlog, e.g. long replies): no growth, no claim.
		{name: "overload in flight steady", open: true, trend: record.LoadTrend{WindowS: 60, Issued: 360, Completed: 180, InFlightFirst: 30, InFlightSecond: 31}},

		// Two causes at once fire in the fixed order: client first, then oom.
		{name: "order", samples: const10(vals{mem: 0.99, util: 60}), failed: 2, client: saturated,
			want: []string{"client_bound", "oom_risk"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &record.Summary{Requests: record.Requests{Failed: tt.failed}, Client: tt.client, Mode: record.ModeClosed}
			if tt.open {
				s.Mode = record.ModeOpen
			}
			got := Hints(tt.samples, s, tt.trend)
			var rules []string
			for _, h := range got {
				rules = append(rules, h.Rule)
				if len(h.Figures) == 0 || h.Message == "" {
					t.Errorf("hint %s cites no figures: %+v", h.Rule, h)
				}
			}
			if !slices.Equal(rules, tt.want) {
				t.Fatalf("hints = %v, want %v (%+v)", rules, tt.want, got)
			}
			if tt.figures != nil && !maps.Equal(got[0].Figures, tt.figures) {
				t.Errorf("figures = %v, want %v", got[0].Figures, tt.figures)
			}
		})
	}
}

// withGaps marks the samples at the given indexes as scrape gaps, their
// values gone.
func withGaps(samples []observe.Sample, at ...int) []observe.Sample {
	for _, i := range at {
		samples[i].Gap, samples[i].Values = true, nil
	}
	return samples
}

// TestHintsOnlyMeasuredWindow: Diagnose reads the measured window alone,
// so a compute-bound warm-up does not make a light run compute bound.
func TestHintsOnlyMeasuredWindow(t *testing.T) {
	t.Parallel()
	busy := const10(vals{observe.GPUUtil: 99, observe.QueueDepth: 4, observe.OutputTokensPerS: 1000})
	light := steadyEvery("srv", hintSeconds, 1e6, func(i int) vals {
		return vals{observe.GPUUtil: 20, observe.OutputTokensPerS: 100 * float64(i+1)}
	})
	for i := range light {
		light[i].TimeUS += 10e6
	}
	samples := append(busy, light...)
	tests := []struct {
		name string
		info record.RunInfo
		want []string
	}{
		// The busy first ten seconds are the warm-up: the measured light
		// ten seconds (20% busy, throughput rising) earn no hint.
		{"busy warm-up excluded", record.RunInfo{WarmupEndUS: 10e6, EndUS: 20e6}, nil},
		// Measuring only the busy first ten seconds finds them compute bound.
		{"busy window measured", record.RunInfo{EndUS: 20e6, MeasureEndUS: 10e6, WarmupEndUS: 0}, []string{"compute_bound"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &record.Summary{}
			if err := Diagnose(s, Evidence{Samples: samples, Info: tt.info}); err != nil {
				t.Fatal(err)
			}
			var rules []string
			for _, h := range s.Hints {
				rules = append(rules, h.Rule)
			}
			if !slices.Equal(rules, tt.want) {
				t.Errorf("hints = %v, want %v", rules, tt.want)
			}
		})
	}
}
