package sim

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// MetricSets are the names the simulator's /metrics can speak
// (Config.Metrics): vLLM's (the default), or TGI's, Triton's or
// TorchServe's own, for testing what a scraper makes of each server. The
// engine behind them is the same; Ollama exports no metrics.
var MetricSets = []string{"vllm", "tgi", "triton", "torchserve"}

// checkMetricSet validates Config.Metrics.
func checkMetricSet(name string) error {
	if name == "" || slices.Contains(MetricSets, name) {
		return nil
	}
	return fmt.Errorf("metrics %q: want %s", name, strings.Join(MetricSets, ", "))
}

// serverMetrics is one server's metric names, fed the engine's events on
// the scheduler goroutine as vLLM's are.
type serverMetrics interface {
	observeToken(ev TokenEvent)
	observeFinish(s *Sequence)
	observeEngine(e *Engine)
}

// newServerMetrics registers the named set on reg; nil for vllm, which
// metrics itself is.
func newServerMetrics(name string, p Profile, reg prometheus.Registerer) serverMetrics {
	switch name {
	case "tgi":
		return newTGIMetrics(reg)
	case "triton":
		return newTritonMetrics(p, reg)
	case "torchserve":
		return newTorchServeMetrics(p, reg)
	}
	return nil
}

// tgiMetrics are TGI router's names (router/src/server.rs, infer.rs).
type tgiMetrics struct {
	queue, batch                            prometheus.Gauge
	count, success                          prometheus.Counter
	duration, queueDur, inference, perToken prometheus.Histogram
	generated, input                        prometheus.Histogram
}

func newTGIMetrics(reg prometheus.Registerer) *tgiMetrics {
	g := func(name string) prometheus.Gauge {
		m := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: name})
		reg.MustRegister(m)
		return m
	}
	c := func(name string) prometheus.Counter {
		m := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: name})
		reg.MustRegister(m)
		return m
	}
	h := func(name string, buckets []float64) prometheus.Histogram {
		m := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: name, Buckets: buckets})
		reg.MustRegister(m)
		return m
	}
	return &tgiMetrics{
		queue: g("tgi_queue_size"), batch: g("tgi_batch_current_size"),
		count: c("tgi_request_count"), success: c("tgi_request_success"),
		duration:  h("tgi_request_duration", requestBuckets),
		queueDur:  h("tgi_request_queue_duration", requestBuckets),
		inference: h("tgi_request_inference_duration", requestBuckets),
		perToken:  h("tgi_request_mean_time_per_token_duration", tokenBuckets),
		generated: h("tgi_request_generated_tokens", countBuckets),
		input:     h("tgi_request_input_length", countBuckets),
	}
}

func (m *tgiMetrics) observeToken(TokenEvent) {}

// observeFinish records a finished request; TGI counts a request when it
// arrives, the simulator when it finishes (failures are not simulated
// per request here).
func (m *tgiMetrics) observeFinish(s *Sequence) {
	m.count.Inc()
	m.success.Inc()
	inference := s.lastToken - s.scheduled
	m.duration.Observe((s.lastToken - s.arrival).Seconds())
	m.queueDur.Observe((s.scheduled - s.arrival).Seconds())
	m.inference.Observe(inference.Seconds())
	m.perToken.Observe(inference.Seconds() / float64(max(s.generated, 1)))
	m.generated.Observe(float64(s.generated))
	m.input.Observe(float64(s.req.PromptTokens))
}

func (m *tgiMetrics) observeEngine(e *Engine) {
	m.queue.Set(float64(e.Waiting()))
	m.batch.Set(float64(e.Running()))
}

// tritonMetrics are Triton's per-model names (docs/user_guide/metrics.md):
// cumulative counters in microseconds, the pending count, and the
// first-response histogram of decoupled (streaming) models.
type tritonMetrics struct {
	success, count, exec, reqUS, queueUS, inputUS, inferUS, outputUS prometheus.Counter
	pending                                                          prometheus.Gauge
	first                                                            prometheus.Histogram
}

func newTritonMetrics(p Profile, reg prometheus.Registerer) *tritonMetrics {
	labels := prometheus.Labels{"model": p.Model, "version": "1"}
	c := func(name, help string) prometheus.Counter {
		m := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
		reg.MustRegister(m)
		return m
	}
	m := &tritonMetrics{
		success:  c("nv_inference_request_success", "Number of successful inference requests, all batch sizes"),
		count:    c("nv_inference_count", "Number of inferences performed (does not include cached requests)"),
		exec:     c("nv_inference_exec_count", "Number of model executions performed (does not include cached requests)"),
		reqUS:    c("nv_inference_request_duration_us", "Cumulative inference request duration in microseconds (includes cached requests)"),
		queueUS:  c("nv_inference_queue_duration_us", "Cumulative inference queuing duration in microseconds (includes cached requests)"),
		inputUS:  c("nv_inference_compute_input_duration_us", "Cumulative compute input duration in microseconds (does not include cached requests)"),
		inferUS:  c("nv_inference_compute_infer_duration_us", "Cumulative compute inference duration in microseconds (does not include cached requests)"),
		outputUS: c("nv_inference_compute_output_duration_us", "Cumulative inference compute output duration in microseconds (does not include cached requests)"),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{Name: "nv_inference_pending_request_count",
			Help: "Instantaneous number of pending requests awaiting execution per-model.", ConstLabels: labels}),
		first: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "nv_inference_first_response_histogram_ms",
			Help: "Duration from request to first response in milliseconds", ConstLabels: labels,
			Buckets: []float64{100, 500, 2000, 5000}}),
	}
	reg.MustRegister(m.pending, m.first)
	return m
}

func (m *tritonMetrics) observeToken(ev TokenEvent) {
	if ev.First {
		s := ev.Seq
		m.first.Observe(float64((s.firstToken - s.arrival).Microseconds()) / 1000)
	}
}

func (m *tritonMetrics) observeFinish(s *Sequence) {
	m.success.Inc()
	m.count.Inc()
	m.exec.Inc()
	m.reqUS.Add(float64((s.lastToken - s.arrival).Microseconds()))
	m.queueUS.Add(float64((s.scheduled - s.arrival).Microseconds()))
	m.inferUS.Add(float64((s.lastToken - s.scheduled).Microseconds()))
}

func (m *tritonMetrics) observeEngine(e *Engine) { m.pending.Set(float64(e.Waiting())) }

// torchServeMetrics are TorchServe's Prometheus names (its metrics API):
// cumulative microsecond counters and the request count.
type torchServeMetrics struct {
	requests, latencyUS, queueUS prometheus.Counter
}

func newTorchServeMetrics(p Profile, reg prometheus.Registerer) *torchServeMetrics {
	host, _ := os.Hostname()
	labels := prometheus.Labels{"model_name": p.Model, "model_version": "default", "uuid": "inferload-sim", "hostname": host}
	c := func(name, help string) prometheus.Counter {
		m := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
		reg.MustRegister(m)
		return m
	}
	return &torchServeMetrics{
		requests:  c("ts_inference_requests_total", "Total number of inference requests."),
		latencyUS: c("ts_inference_latency_microseconds", "Cumulative inference duration in microseconds"),
		queueUS:   c("ts_queue_latency_microseconds", "Cumulative queue duration in microseconds"),
	}
}

func (m *torchServeMetrics) observeToken(TokenEvent) {}

func (m *torchServeMetrics) observeFinish(s *Sequence) {
	m.requests.Inc()
	m.latencyUS.Add(float64((s.lastToken - s.scheduled).Microseconds()))
	m.queueUS.Add(float64((s.scheduled - s.arrival).Microseconds()))
}

func (m *torchServeMetrics) observeEngine(*Engine) {}
