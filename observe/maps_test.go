package observe

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"

	dto "github.com/prometheus/client_model/go"
)

// parseFixture reads one testdata exposition with the real parser.
func parseFixture(t *testing.T, name string) families {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return fams
}

// zeroed is the scrape a freshly started server would have given: the
// same gauges, every counter and histogram at zero. Deriving the fixture
// against it over one second turns its cumulative totals into the window's.
func zeroed(fams families) families {
	out := families{}
	for name, f := range fams {
		c := proto.Clone(f).(*dto.MetricFamily)
		for _, m := range c.GetMetric() {
			if m.Counter != nil {
				m.Counter.Value = proto.Float64(0)
			}
			if h := m.GetHistogram(); h != nil {
				h.SampleCount, h.SampleSum = proto.Uint64(0), proto.Float64(0)
				for _, b := range h.GetBucket() {
					b.CumulativeCount = proto.Uint64(0)
				}
			}
		}
		out[name] = c
	}
	return out
}

// TestFixturesDerive parses each server's documented exposition format and
// checks the derived series.
func TestFixturesDerive(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file  string
		kinds []string
		want  map[string]float64
	}{
		// vLLM (captured): gauges, counters as rates, TTFT percentiles
		// interpolated inside the (10 ms, 20 ms] bucket.
		{"vllm.prom", []string{"vllm"}, map[string]float64{QueueDepth: 0, RunningBatch: 0, KVCacheUsage: 0,
			OutputTokensPerS: 28, PromptTokensPerS: 15, ServerTTFT + "_p50_ms": 15, ServerTTFT + "_p99_ms": 19.9,
			ServerTTFT + "_mean_ms": 17.5, ServerTTFT + "_count": 2, ServerITL + "_count": 26}},
		// llama.cpp (captured): deferred is the queue, the hit rate is
		// cached ÷ (cached + processed) = 47 ÷ 83.
		{"llamacpp.prom", []string{"llamacpp"}, map[string]float64{QueueDepth: 0, RunningBatch: 0,
			PrefixHitRate: 47.0 / 83, PromptTokensPerS: 36, OutputTokensPerS: 887}},
		// SGLang: its own names, the ITL histogram under its new name.
		{"sglang.prom", []string{"sglang"}, map[string]float64{QueueDepth: 6, RunningBatch: 24, KVCacheUsage: 0.42,
			PrefixHitRate: 0.25, OutputTokensPerS: 1600, ServerTTFT + "_p50_ms": 100 + 100*3.0/6, ServerITL + "_p50_ms": 10}},
		// TGI: queue-duration histogram, token counts from histogram sums.
		{"tgi.prom", []string{"tgi"}, map[string]float64{QueueDepth: 3, RunningBatch: 16, OutputTokensPerS: 5120,
			ServerQueueTime + "_mean_ms": 50, ServerITL + "_mean_ms": 20}},
		// Triton: mean queue time from cumulative µs ÷ requests, GPU
		// figures from its own nv_gpu_* gauges.
		{"triton.prom", []string{"triton"}, map[string]float64{QueueDepth: 7, ServerQueueTime + "_mean_ms": 2,
			GPUUtil: 90, GPUMemUsedMiB: 2 * 61440, GPUMemTotalMiB: 2 * 81920, GPUMemUsedFrac: 0.75, GPUPowerW: 611}},
		// TorchServe: mean queue time from cumulative µs ÷ requests,
		// 300,000 µs over 100 requests.
		{"torchserve.prom", []string{"torchserve"}, map[string]float64{ServerQueueTime + "_mean_ms": 3}},
		// DCGM: utilisation averaged, memory and power summed, total =
		// used + free.
		{"dcgm.prom", []string{"dcgm"}, map[string]float64{GPUUtil: 96, GPUMemUsedMiB: 152000, GPUMemTotalMiB: 162000,
			GPUMemUsedFrac: 152000.0 / 162000, GPUPowerW: 1291}},
		// node_exporter: 1 of 2 CPU-seconds idle is 50% busy.
		{"node.prom", []string{"node"}, map[string]float64{HostCPUPct: 50, HostMemAvailMiB: 10240,
			HostNetInBytesPS: 1500, HostNetOutBytesPS: 2000}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			cur := parseFixture(t, tt.file)
			if got := Detect(cur); !slices.Equal(got, tt.kinds) {
				t.Fatalf("Detect = %v, want %v", got, tt.kinds)
			}
			var maps []Map
			for _, k := range tt.kinds {
				m, err := LookupMap(k)
				if err != nil {
					t.Fatal(err)
				}
				maps = append(maps, m)
			}
			var s Sample
			derive(&s, maps, zeroed(cur), cur, 1)
			for name, want := range tt.want {
				got, ok := s.Values[name]
				if !ok || math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
					t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
				}
			}
		})
	}
}

// TestFirstScrapeHasOnlyGauges: with no previous scrape there is no
// window, so rates and percentiles are absent rather than made up.
func TestFirstScrapeHasOnlyGauges(t *testing.T) {
	t.Parallel()
	cur := parseFixture(t, "sglang.prom")
	m, _ := LookupMap("sglang")
	var s Sample
	derive(&s, []Map{m}, nil, cur, 0)
	if _, ok := s.Values[OutputTokensPerS]; ok {
		t.Errorf("first scrape has a rate: %v", s.Values)
	}
	if s.Values[QueueDepth] != 6 {
		t.Errorf("queue depth = %v, want 6", s.Values[QueueDepth])
	}
}

// TestCounterResetCountsCurrentValue: a counter that went down (server
// restart) contributes its whole current value, as in Prometheus.
func TestCounterResetCountsCurrentValue(t *testing.T) {
	t.Parallel()
	cur := parseFixture(t, "vllm.prom")
	prev := parseFixture(t, "vllm.prom")
	prev["vllm:generation_tokens_total"].Metric[0].Counter.Value = proto.Float64(1000)
	m, _ := LookupMap("vllm")
	var s Sample
	derive(&s, []Map{m}, prev, cur, 2)
	if got := s.Values[OutputTokensPerS]; got != 14 {
		t.Errorf("output tokens/s after reset = %v, want 28/2", got)
	}
}

// TestLookupMapUnknown names the known kinds in its error.
func TestLookupMapUnknown(t *testing.T) {
	t.Parallel()
	_, err := LookupMap("vllmm")
	if err == nil || !slices.ContainsFunc(MapKinds(), func(k string) bool { return k == "vllm" }) {
		t.Fatalf("err = %v", err)
	}
}
