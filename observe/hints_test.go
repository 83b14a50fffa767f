package observe

import (
	"slices"
	"testing"

	"github.com/inferload/inferload/record"
)

// steady builds n one-second samples of source, each with vals(i).
func steady(source string, n int, vals func(i int) map[string]float64) []Sample {
	return steadyEvery(source, n, 1e6, vals)
}

// steadyEvery builds n samples of source everyUS apart.
func steadyEvery(source string, n int, everyUS int64, vals func(i int) map[string]float64) []Sample {
	out := make([]Sample, n)
	for i := range out {
		at := int64(i)*everyUS + everyUS/2
		out[i] = Sample{TS: at / 1e6, TimeUS: at, Source: source, Values: vals(i)}
	}
	return out
}

// TestHints: each rule fires on its planted situation, cites its figures,
// and a healthy run gets no hint at all.
func TestHints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		samples []Sample
		failed  int64
		want    []string
	}{
		// GPU busy, throughput flat: compute bound.
		{"compute", steady("srv", 10, func(i int) map[string]float64 {
			return map[string]float64{GPUUtil: 97, OutputTokensPerS: 1000 + float64(i%2)}
		}), 0, []string{"compute_bound"}},
		// KV cache full and preempting: memory bound.
		{"memory", steady("srv", 10, func(i int) map[string]float64 {
			return map[string]float64{KVCacheUsage: 0.95, PreemptionsPerS: float64(i), GPUUtil: 70, OutputTokensPerS: 100 * float64(i)}
		}), 0, []string{"memory_bound"}},
		// Queue growing while the GPU idles: the scheduler's limit.
		{"scheduler", steady("srv", 10, func(i int) map[string]float64 {
			return map[string]float64{QueueDepth: float64(2 * i), GPUUtil: 30}
		}), 0, []string{"scheduler_limit"}},
		// The client's CPU pegged for the whole run: client bound.
		{"client", steady("client", 10, func(int) map[string]float64 {
			return map[string]float64{ClientCPUPct: 97, ClientSchedLagP99: 40}
		}), 0, []string{"client_bound"}},
		// Failures with GPU memory nearly full: OOM risk.
		{"oom", steady("srv", 10, func(int) map[string]float64 {
			return map[string]float64{GPUMemUsedFrac: 0.99, GPUUtil: 60}
		}), 3, []string{"oom_risk"}},
		// KV full and preempting while the GPU is busy and flat: memory
		// bound only, not compute bound as well.
		{"memory_not_compute", steady("srv", 10, func(i int) map[string]float64 {
			return map[string]float64{KVCacheUsage: 0.97, PreemptionsPerS: 2, GPUUtil: 99, OutputTokensPerS: 500}
		}), 0, []string{"memory_bound"}},
		// Scheduling lag with the client nearly idle: the host was
		// contended, the client was not saturated (warned, not hinted).
		{"contended", steady("client", 10, func(int) map[string]float64 {
			return map[string]float64{ClientCPUPct: 22, ClientSchedLagP99: 117, ClientRunnable: 1, ClientGOMAXPROCS: 2}
		}), 0, nil},
		// Lag with the client busy is the client's own: client bound.
		{"client_lag", steady("client", 10, func(int) map[string]float64 {
			return map[string]float64{ClientCPUPct: 60, ClientSchedLagP99: 40}
		}), 0, []string{"client_bound"}},
		// Little CPU but a backlog of runnable goroutines, five per CPU,
		// with lag: the client wants every CPU and other processes hold
		// them, so it is client bound all the same.
		{"client_backlog", steady("client", 10, func(int) map[string]float64 {
			return map[string]float64{ClientCPUPct: 15, ClientSchedLagP99: 120, ClientRunnable: 10, ClientGOMAXPROCS: 2}
		}), 0, []string{"client_bound"}},
		// Busy and lagging 250 ms samples, every third without a lag
		// figure (no scheduling event sampled): unknown windows neither
		// break nor extend the run, so 3 s of the rest still saturate.
		{"client_lag_unknown", steadyEvery("client", 24, 250_000, func(i int) map[string]float64 {
			if i%3 == 2 {
				return map[string]float64{ClientCPUPct: 45, ClientRunnable: 9, ClientGOMAXPROCS: 2}
			}
			return map[string]float64{ClientCPUPct: 45, ClientSchedLagP99: 90, ClientRunnable: 9, ClientGOMAXPROCS: 2}
		}), 0, []string{"client_bound"}},
		// Three pegged samples 250 ms apart are 0.5 s of saturation, not
		// the 3 s the verdict needs.
		{"brief", steadyEvery("client", 4, 250_000, func(int) map[string]float64 {
			return map[string]float64{ClientCPUPct: 99, ClientSchedLagP99: 40}
		}), 0, nil},
		// A healthy run: moderate utilisation, rising throughput, empty queue.
		{"healthy", append(steady("srv", 10, func(i int) map[string]float64 {
			return map[string]float64{GPUUtil: 60, OutputTokensPerS: 100 * float64(i+1), QueueDepth: 0, KVCacheUsage: 0.3, GPUMemUsedFrac: 0.8}
		}), steady("client", 10, func(int) map[string]float64 {
			return map[string]float64{ClientCPUPct: 20, ClientSchedLagP99: 0.1}
		})...), 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &record.Summary{Requests: record.Requests{Failed: tt.failed}}
			Summarize(tt.samples, record.RunInfo{EndUS: 20e6}, s)
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
			if s.Client != nil && s.Client.Saturated != saturated || warned != (len(s.Warnings) == 1) {
				t.Errorf("client = %+v, warnings = %v", s.Client, s.Warnings)
			}
		})
	}
}

// TestSummarizeKeepsMeasuredWindow: warm-up samples do not count, gaps are
// counted per source.
func TestSummarizeKeepsMeasuredWindow(t *testing.T) {
	t.Parallel()
	samples := steady("srv", 6, func(i int) map[string]float64 { return map[string]float64{QueueDepth: float64(i)} })
	samples[4].Gap, samples[4].Values = true, nil
	s := &record.Summary{}
	Summarize(samples, record.RunInfo{WarmupEndUS: 2e6, EndUS: 10e6}, s)
	src := s.Server.Sources[0]
	q := src.Series[QueueDepth]
	// Seconds 2, 3 and 5 are measured data (4 is a gap): mean 10/3, max 5, last 5.
	if src.Samples != 4 || src.Gaps != 1 || q.Max != 5 || q.Last != 5 || q.Mean != 10.0/3 {
		t.Fatalf("source = %+v", src)
	}
}
