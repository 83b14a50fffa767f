package sim

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func scrape(t *testing.T, c *http.Client, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := c.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// value returns the sample of a counter or gauge, or a histogram's count,
// from the series whose labels include match.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, match ...string) float64 {
	t.Helper()
	fam, ok := fams[name]
	if !ok {
		t.Fatalf("metric %s missing", name)
	}
	for _, m := range fam.GetMetric() {
		if !hasLabels(m, match) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("metric %s has no series with labels %v", name, match)
	return 0
}

func histSum(t *testing.T, fams map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	return fams[name].GetMetric()[0].GetHistogram().GetSampleSum()
}

func hasLabels(m *dto.Metric, pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == pairs[i] && l.GetValue() == pairs[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func TestMetricsMatchRequests(t *testing.T) {
	t.Parallel()
	_, url, c := newTestServer(t, nil)
	type sent struct{ prompt, out int }
	reqs := []sent{{5, 10}, {40, 3}, {17, 25}, {1, 1}, {100, 8}}
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Go(func() {
			prompt := strings.TrimSpace(strings.Repeat(fmt.Sprintf("p%d ", i), r.prompt))
			body := fmt.Sprintf(`{"prompt":%q,"max_tokens":%d,"ignore_eos":true,"stream":%v}`, prompt, r.out, i%2 == 0)
			if got := post(context.Background(), c, url+"/v1/completions", body); got.status != 200 {
				t.Errorf("request %d: status %d %s", i, got.status, got.body)
			}
		})
	}
	wg.Wait()
	var prompt, out, gaps float64
	for _, r := range reqs {
		prompt += float64(r.prompt)
		out += float64(r.out)
		gaps += float64(r.out - 1)
	}
	n := float64(len(reqs))
	fams := scrape(t, c, url)
	tiny, _ := LookupProfile("tiny")
	tests := []struct {
		metric string
		labels []string
		want   float64
	}{
		{"vllm:prompt_tokens_total", nil, prompt},                                             // every prompt token counted once
		{"vllm:generation_tokens_total", nil, out},                                            // every generated token
		{"vllm:request_success_total", []string{"finish_reason", "length"}, n},                // ignore_eos ends on length
		{"vllm:time_to_first_token_seconds", nil, n},                                          // one TTFT per request
		{"vllm:e2e_request_latency_seconds", nil, n},                                          // one E2E per request
		{"vllm:request_queue_time_seconds", nil, n},                                           // one queue time per request
		{"vllm:inter_token_latency_seconds", nil, gaps},                                       // one gap per token after the first
		{"vllm:time_per_output_token_seconds", nil, gaps},                                     // the older name, same samples
		{"vllm:request_prompt_tokens", nil, n},                                                // per-request histograms
		{"vllm:request_generation_tokens", nil, n},                                            //
		{"vllm:prefix_cache_queries_total", nil, prompt},                                      // each prompt looked up once
		{"vllm:num_requests_running", []string{"model_name", "tiny-sim"}, 0},                  // all finished
		{"vllm:num_requests_waiting", nil, 0},                                                 // nothing queued
		{"vllm:kv_cache_usage_perc", nil, 0},                                                  // cached blocks are free blocks
		{"vllm:gpu_cache_usage_perc", nil, 0},                                                 // the V0 name agrees
		{"vllm:num_preemptions_total", nil, 0},                                                // light load, no pressure
		{"vllm:cache_config_info", []string{"block_size", "16", "num_gpu_blocks", "1024"}, 1}, // engine shape
		{"DCGM_FI_DEV_FB_USED", []string{"gpu", "0", "modelName", "NVIDIA A100-SXM4-80GB"}, float64(tiny.FramebufferUsedMiB())},
		{"DCGM_FI_DEV_FB_FREE", []string{"gpu", "0"}, float64(tiny.GPU.MemoryMiB - tiny.FramebufferUsedMiB())},
	}
	for _, tt := range tests {
		if got := value(t, fams, tt.metric, tt.labels...); got != tt.want {
			t.Errorf("%s%v = %g, want %g", tt.metric, tt.labels, got, tt.want)
		}
	}
	if got := histSum(t, fams, "vllm:request_prompt_tokens"); got != prompt {
		t.Errorf("request_prompt_tokens sum %g, want %g", got, prompt)
	}
	if e2e, ttft := histSum(t, fams, "vllm:e2e_request_latency_seconds"), histSum(t, fams, "vllm:time_to_first_token_seconds"); e2e <= ttft || ttft <= 0 {
		t.Errorf("E2E sum %g should exceed TTFT sum %g > 0", e2e, ttft)
	}
	util := value(t, fams, "DCGM_FI_DEV_GPU_UTIL", "gpu", "0")
	power := value(t, fams, "DCGM_FI_DEV_POWER_USAGE", "gpu", "0")
	if util <= 0 || util > 100 || power <= tiny.GPU.IdleWatts || power > tiny.GPU.MaxWatts {
		t.Errorf("after a burst of work: GPU util %g%%, power %gW; want (0,100] and above idle", util, power)
	}
	if model := fams["vllm:num_requests_running"].GetMetric()[0]; !hasLabels(model, []string{"model_name", "tiny-sim"}) {
		t.Errorf("vLLM metrics must carry model_name: %v", model.GetLabel())
	}
}

func TestGPUIdleAfterWork(t *testing.T) {
	t.Parallel()
	p, _ := LookupProfile("tiny")
	clock := time.Unix(1000, 0)
	g := newGPUCollector(p, clock)
	g.now = func() time.Time { return clock }
	tests := []struct {
		busy, idle time.Duration
		want       float64
	}{
		{300 * time.Millisecond, 700 * time.Millisecond, 30}, // busy 0.3 s of 1 s
		{0, time.Second, 0},   // idle since the last scrape
		{time.Second, 0, 100}, // busy throughout
	}
	for _, tt := range tests {
		if tt.busy > 0 {
			g.stepStarted(clock)
			clock = clock.Add(tt.busy)
			g.stepEnded(clock)
		}
		clock = clock.Add(tt.idle)
		if got := g.utilisation(); got != tt.want {
			t.Errorf("busy %s idle %s: utilisation %g%%, want %g%%", tt.busy, tt.idle, got, tt.want)
		}
	}
	// A step still running counts up to the scrape, and only once.
	g.stepStarted(clock)
	clock = clock.Add(500 * time.Millisecond)
	if got := g.utilisation(); got != 100 {
		t.Errorf("mid-step scrape: %g%%, want 100%%", got)
	}
	clock = clock.Add(250 * time.Millisecond)
	g.stepEnded(clock)
	clock = clock.Add(750 * time.Millisecond)
	if got := g.utilisation(); got != 25 {
		t.Errorf("scrape after the step ended: %g%%, want 25%% (the step's first half was already counted)", got)
	}
}

func TestMetricsUnderKVPressure(t *testing.T) {
	t.Parallel()
	// 24 blocks of 16 tokens; four requests of 40 + 100 tokens need 9
	// blocks each at the end, 36 in all: the engine must preempt.
	_, url, c := newTestServer(t, func(cfg *Config) {
		cfg.Profile.NumGPUBlocks, cfg.Profile.MaxModelLen, cfg.Profile.GPU.Count = 24, 384, 0
	})
	const users, out = 4, 100
	var wg sync.WaitGroup
	for i := range users {
		wg.Go(func() {
			prompt := strings.TrimSpace(strings.Repeat(fmt.Sprintf("u%d ", i), 40))
			body := fmt.Sprintf(`{"prompt":%q,"max_tokens":%d,"ignore_eos":true,"stream":true}`, prompt, out)
			r := post(context.Background(), c, url+"/v1/completions", body)
			if tr, _ := transcript(t, r.events); tr != strings.Repeat("T", out)+"FD" {
				t.Errorf("user %d: transcript %q, want %d tokens and a normal end", i, tr, out)
			}
		})
	}
	wg.Wait()
	fams := scrape(t, c, url)
	if p := value(t, fams, "vllm:num_preemptions_total"); p == 0 {
		t.Error("no preemptions although the KV cache cannot hold all four requests")
	}
	if got := value(t, fams, "vllm:generation_tokens_total"); got != users*out {
		t.Errorf("generation tokens %g, want %d: preemption must not repeat or lose tokens", got, users*out)
	}
	if q, h := value(t, fams, "vllm:prefix_cache_queries_total"), value(t, fams, "vllm:prefix_cache_hits_total"); q <= users*40 || h <= 0 {
		t.Errorf("prefix cache queries %g, hits %g: a preempted request looks its prompt up again and finds its own blocks", q, h)
	}
	if _, ok := fams["DCGM_FI_DEV_GPU_UTIL"]; ok {
		t.Error("a profile without GPUs exports DCGM metrics")
	}
}
