package live

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferload/inferload/record"
)

// Outcome label values of inferload_requests_total besides the error kinds
// of record.ErrorKinds.
const (
	OutcomeOK                = "ok"
	OutcomeExpectedRejection = "expected_rejection"
	outcomeUnknownError      = "error"
)

// Phase label values: warm-up requests are exported too (a live view is
// where a warm-up is worth seeing) but can be filtered out.
const (
	PhaseWarmup  = "warmup"
	PhaseMeasure = "measure"
)

// Metrics is the load generator's own Prometheus metrics during a run,
// on a private registry (nothing global, several runs in one process do not
// collide). Observe is called once per finished request; it costs a few
// atomic adds per request plus one per output-token gap for the ITL
// histogram, and allocates nothing once a class has been seen.
// Latency histograms hold successful requests only, as summary.json does.
type Metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	inTok, outTk *prometheus.CounterVec
	ttft, itl    *prometheus.HistogramVec
	tpot, e2e    *prometheus.HistogramVec
	queueDelay   prometheus.Histogram
	inFlight     atomic.Pointer[func() int]
}

// Latency buckets (seconds), spaced evenly on a log scale over the range
// each figure takes on real servers: TTFT from a cached 5 ms prompt to a
// minute-long queue, ITL and TPOT from sub-millisecond decode steps to
// multi-second stalls, E2E up to the longest generations.
var (
	ttftBuckets  = prometheus.ExponentialBucketsRange(0.005, 60, 24)
	tokenBuckets = prometheus.ExponentialBucketsRange(0.0005, 5, 24)
	e2eBuckets   = prometheus.ExponentialBucketsRange(0.01, 600, 24)
)

// NewMetrics returns the metrics of the run named run, with nothing
// observed yet. inferload_run_info carries the name and the version.
func NewMetrics(run, version string) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "inferload_requests_total",
		Help: "Finished requests by class, phase (warmup or measure) and outcome (ok, expected_rejection or the error kind)."},
		[]string{"class", "phase", "outcome"})
	m.inTok = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "inferload_input_tokens_total",
		Help: "Prompt tokens of successful requests, by class."}, []string{"class"})
	m.outTk = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "inferload_output_tokens_total",
		Help: "Output tokens of successful requests, by class."}, []string{"class"})
	m.ttft = histogramVec("inferload_ttft_seconds", "Time to first token of successful streamed requests.", ttftBuckets)
	m.itl = histogramVec("inferload_itl_seconds", "Gaps between consecutive content-carrying stream events of successful requests.", tokenBuckets)
	m.tpot = histogramVec("inferload_tpot_seconds", "Time per output token after the first, per successful streamed request.", tokenBuckets)
	m.e2e = histogramVec("inferload_e2e_seconds", "End-to-end latency of successful requests.", e2eBuckets)
	m.queueDelay = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "inferload_queue_delay_seconds",
		Help: "Open loop: how late requests were sent after their intended time (client-side delay).", Buckets: tokenBuckets})
	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: "inferload_run_info",
		Help: "Always 1; labels name the run and the inferload version.", ConstLabels: prometheus.Labels{"run": run, "version": version}})
	info.Set(1)
	start := prometheus.NewGauge(prometheus.GaugeOpts{Name: "inferload_run_start_time_seconds",
		Help: "Unix time the exporter was created, just before the run started."})
	start.Set(float64(time.Now().UnixNano()) / 1e9)
	inFlight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "inferload_in_flight_requests",
		Help: "Requests sent and not yet finished."}, m.currentInFlight)
	m.reg.MustRegister(m.requests, m.inTok, m.outTk, m.ttft, m.itl, m.tpot, m.e2e, m.queueDelay, info, start, inFlight)
	return m
}

func histogramVec(name, help string, buckets []float64) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, []string{"class"})
}

// Registry is the private registry the metrics live in, to serve with
// promhttp or gather in tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// SetInFlight tells the exporter how to read the number of requests in
// flight (engine.InFlight); until it is called the gauge reads 0.
func (m *Metrics) SetInFlight(current func() int) { m.inFlight.Store(&current) }

func (m *Metrics) currentInFlight() float64 {
	if f := m.inFlight.Load(); f != nil {
		return float64((*f)())
	}
	return 0
}

// Observe counts one finished request. Safe for concurrent use.
func (m *Metrics) Observe(r *record.Result) {
	class := r.Class
	if class == "" {
		class = record.DefaultClass
	}
	phase := PhaseMeasure
	if r.Warmup {
		phase = PhaseWarmup
	}
	m.requests.WithLabelValues(class, phase, outcome(r)).Inc()
	if r.OpenLoop {
		m.queueDelay.Observe(seconds(r.QueueDelayUS))
	}
	if !r.OK() {
		return
	}
	m.inTok.WithLabelValues(class).Add(float64(r.InputTokens))
	m.outTk.WithLabelValues(class).Add(float64(r.OutputTokens))
	m.e2e.WithLabelValues(class).Observe(seconds(r.E2EUS))
	ttft, ok := record.TTFTUS(r)
	if !ok {
		return
	}
	m.ttft.WithLabelValues(class).Observe(seconds(ttft))
	if tpot, ok := record.TPOTUS(r); ok {
		m.tpot.WithLabelValues(class).Observe(seconds(tpot))
	}
	if r.ContentEvents() > 1 {
		itl := m.itl.WithLabelValues(class)
		r.EachGap(func(gapUS, n int64) {
			for range n {
				itl.Observe(seconds(gapUS))
			}
		})
	}
}

// outcome is the outcome label of r: ok, expected_rejection or its error kind.
func outcome(r *record.Result) string {
	switch {
	case r.OK():
		return OutcomeOK
	case r.ExpectedRejection():
		return OutcomeExpectedRejection
	case r.Error != record.ErrNone:
		return string(r.Error)
	}
	return outcomeUnknownError
}

func seconds(us int64) float64 { return float64(us) / 1e6 }
