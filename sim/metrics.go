package sim

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Bucket boundaries copied from vLLM's own metrics, so dashboards built
// for vLLM read the simulator unchanged.
var (
	ttftBuckets    = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	tokenBuckets   = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	requestBuckets = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
	countBuckets   = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}
	latenessBucket = []float64{1e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05, 0.1}
)

// metrics is the simulator's /metrics: vLLM's names for the engine, DCGM
// exporter's for the GPUs, on a private registry. Only the scheduler
// goroutine updates the engine metrics.
type metrics struct {
	reg *prometheus.Registry

	running, waiting, gpuCache, kvCache prometheus.Gauge

	promptTokens, generationTokens, preemptions prometheus.Counter
	prefixQueries, prefixHits                   prometheus.Counter
	success                                     *prometheus.CounterVec

	ttft, itl, tpot, e2e, queue, inference prometheus.Histogram
	reqPrompt, reqGeneration, reqTPOT      prometheus.Histogram

	stepLateness prometheus.Histogram

	// server is another server's names, exported instead of vLLM's
	// (Config.Metrics); nil for vLLM's.
	server serverMetrics
}

// newMetrics builds the vLLM names and exports them on m.reg, unless the
// set named is another server's: then that set is exported (m.server)
// and the vLLM names are kept for the simulator's own use only.
func newMetrics(p Profile, gpu *gpuCollector, set string) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	vllm := prometheus.Registerer(m.reg)
	if m.server = newServerMetrics(set, p, m.reg); m.server != nil {
		vllm = prometheus.NewRegistry()
	}
	model := prometheus.Labels{"model_name": p.Model}
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: model})
		vllm.MustRegister(g)
		return g
	}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: model})
		vllm.MustRegister(c)
		return c
	}
	hist := func(name, help string, buckets []float64) prometheus.Histogram {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets, ConstLabels: model})
		vllm.MustRegister(h)
		return h
	}
	m.running = gauge("vllm:num_requests_running", "Number of requests currently running on GPU.")
	m.waiting = gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.")
	m.gpuCache = gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.")
	m.kvCache = gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
	m.promptTokens = counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.")
	m.generationTokens = counter("vllm:generation_tokens_total", "Number of generation tokens processed.")
	m.preemptions = counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.")
	m.prefixQueries = counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.")
	m.prefixHits = counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.")
	m.success = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vllm:request_success_total",
		Help: "Count of successfully processed requests.", ConstLabels: model}, []string{"finish_reason"})
	vllm.MustRegister(m.success)
	m.ttft = hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttftBuckets)
	m.itl = hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", tokenBuckets)
	m.tpot = hist("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.", tokenBuckets)
	m.e2e = hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", requestBuckets)
	m.queue = hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", requestBuckets)
	m.inference = hist("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", requestBuckets)
	m.reqPrompt = hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", countBuckets)
	m.reqGeneration = hist("vllm:request_generation_tokens", "Number of generation tokens processed.", countBuckets)
	m.reqTPOT = hist("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", tokenBuckets)
	m.stepLateness = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "inferload_sim_step_lateness_seconds",
		Help: "How late the simulator delivered a step's tokens against its wall-clock deadline.", Buckets: latenessBucket})
	m.reg.MustRegister(m.stepLateness)
	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: "vllm:cache_config_info", Help: "Information of the LLMEngine CacheConfig.",
		ConstLabels: prometheus.Labels{"block_size": strconv.Itoa(p.BlockSize), "num_gpu_blocks": strconv.Itoa(p.NumGPUBlocks)}})
	info.Set(1)
	vllm.MustRegister(info)
	if gpu != nil {
		m.reg.MustRegister(gpu)
	}
	return m
}

// observeToken records one token event, with times on the engine clock.
func (m *metrics) observeToken(ev TokenEvent) {
	if m.server != nil {
		m.server.observeToken(ev)
	}
	s := ev.Seq
	if ev.First {
		m.ttft.Observe((s.firstToken - s.arrival).Seconds())
		m.queue.Observe((s.scheduled - s.arrival).Seconds())
		m.promptTokens.Add(float64(s.req.PromptTokens))
	} else {
		m.itl.Observe(ev.Gap.Seconds())
		m.tpot.Observe(ev.Gap.Seconds())
	}
}

// observeFinish records a request that generated its last token.
func (m *metrics) observeFinish(s *Sequence, reason string) {
	if m.server != nil {
		m.server.observeFinish(s)
	}
	m.success.WithLabelValues(reason).Inc()
	m.e2e.Observe((s.lastToken - s.arrival).Seconds())
	m.inference.Observe((s.lastToken - s.scheduled).Seconds())
	m.reqPrompt.Observe(float64(s.req.PromptTokens))
	m.reqGeneration.Observe(float64(s.generated))
	if s.generated > 1 {
		m.reqTPOT.Observe((s.lastToken - s.firstToken).Seconds() / float64(s.generated-1))
	}
}

// observeEngine copies the engine's gauges and counter deltas.
func (m *metrics) observeEngine(e *Engine, prev EngineCounters) EngineCounters {
	if m.server != nil {
		m.server.observeEngine(e)
	}
	m.running.Set(float64(e.Running()))
	m.waiting.Set(float64(e.Waiting()))
	kv := e.KVUsage()
	m.gpuCache.Set(kv)
	m.kvCache.Set(kv)
	c := e.Counters()
	m.generationTokens.Add(float64(c.GeneratedTokens - prev.GeneratedTokens))
	m.preemptions.Add(float64(c.Preemptions - prev.Preemptions))
	m.prefixQueries.Add(float64(c.PrefixQueryTokens - prev.PrefixQueryTokens))
	m.prefixHits.Add(float64(c.PrefixHitTokens - prev.PrefixHitTokens))
	return c
}

// gpuCollector reports DCGM exporter metrics for the simulated GPUs.
// Utilisation is the share of wall time the engine spent inside steps
// since the previous scrape, which is how DCGM samples GPU_UTIL; power
// follows utilisation between idle and maximum; framebuffer use is what
// vLLM allocates at start-up and does not move with load.
type gpuCollector struct {
	p       Profile
	descs   [4]*prometheus.Desc
	busy    atomic.Int64 // wall nanoseconds spent in finished steps
	stepAt  atomic.Int64 // wall UnixNano when the current step began; 0 when idle
	mu      sync.Mutex
	lastAt  time.Time
	lastBsy int64
	now     func() time.Time
}

func newGPUCollector(p Profile, start time.Time) *gpuCollector {
	labels := []string{"gpu", "UUID", "device", "modelName", "Hostname"}
	desc := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, labels, nil) }
	return &gpuCollector{
		p: p,
		descs: [4]*prometheus.Desc{
			desc("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."),
			desc("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB)."),
			desc("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB)."),
			desc("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."),
		},
		lastAt: start,
		now:    time.Now,
	}
}

// stepStarted and stepEnded bracket a step on the wall clock.
func (g *gpuCollector) stepStarted(at time.Time) { g.stepAt.Store(at.UnixNano()) }

// stepEnded adds exactly the span stepStarted opened, so the busy time a
// scrape sees never jumps or counts a step twice.
func (g *gpuCollector) stepEnded(at time.Time) {
	if start := g.stepAt.Swap(0); start != 0 {
		g.busy.Add(max(at.UnixNano()-start, 0))
	}
}

// Describe implements prometheus.Collector.
func (g *gpuCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range g.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (g *gpuCollector) Collect(ch chan<- prometheus.Metric) {
	util := g.utilisation()
	used := float64(g.p.FramebufferUsedMiB())
	free := float64(g.p.GPU.MemoryMiB) - used
	power := g.p.GPU.IdleWatts + (g.p.GPU.MaxWatts-g.p.GPU.IdleWatts)*util/100
	for i := range g.p.GPU.Count {
		lv := []string{strconv.Itoa(i), fmt.Sprintf("GPU-5133a7e0-0000-4000-8000-%012d", i), "nvidia" + strconv.Itoa(i), g.p.GPU.Name, "inferload-sim"}
		for j, v := range []float64{util, used, free, power} {
			ch <- prometheus.MustNewConstMetric(g.descs[j], prometheus.GaugeValue, v, lv...)
		}
	}
}

// utilisation is the busy share of wall time since the last scrape, in %.
func (g *gpuCollector) utilisation() float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	busy := g.busy.Load()
	if at := g.stepAt.Load(); at != 0 {
		busy += max(now.UnixNano()-at, 0)
	}
	elapsed := now.Sub(g.lastAt)
	delta := busy - g.lastBsy
	g.lastAt, g.lastBsy = now, busy
	if elapsed <= 0 {
		return 0
	}
	return math.Round(math.Min(100, 100*float64(delta)/float64(elapsed)))
}
