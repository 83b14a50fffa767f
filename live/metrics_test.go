package live

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/inferload/inferload/record"
)

// liveResults are one of each kind of finished request.
var liveResults = []*record.Result{
	// A streamed success: TTFT, 3 ITL gaps, TPOT, E2E and tokens.
	{ID: 1, Class: "short", Stream: true, TTFTUS: 100_000, E2EUS: 400_000, EventsUS: []int64{100_000, 200_000, 300_000, 400_000},
		InputTokens: 50, OutputTokens: 4},
	// A warm-up success of the default class, not streamed: E2E only.
	{ID: 2, Warmup: true, E2EUS: 250_000, InputTokens: 10, OutputTokens: 7},
	// A 5xx failure: counted by kind, no latency, no tokens.
	{ID: 3, Class: "short", E2EUS: 5_000, Error: record.ErrHTTP5xx, Status: 503, InputTokens: 50},
	// A bad-input request refused as it should be, sent late in open loop.
	{ID: 4, Class: "bad", Expect: record.ExpectRejection, Error: record.ErrHTTP4xx, Status: 400,
		OpenLoop: true, QueueDelayUS: 20_000},
}

// scrape fetches and parses a /metrics page.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	return fams
}

// value finds the sample of family name whose labels include want.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for _, lp := range m.GetLabel() {
			if v, ok := want[lp.GetName()]; ok && v != lp.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetricsServed observes one of each kind of result and reads the
// figures back over HTTP, as Prometheus would.
func TestMetricsServed(t *testing.T) {
	t.Parallel()
	m := NewMetrics("run-1", "test")
	m.SetInFlight(func() int { return 7 })
	for _, r := range liveResults {
		m.Observe(r)
	}
	srv, err := ServeMetrics("127.0.0.1:0", m)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	fams := scrape(t, "http://"+srv.Addr()+"/metrics")
	cases := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		// A measured success of its class.
		{"inferload_requests_total", map[string]string{"class": "short", "phase": PhaseMeasure, "outcome": OutcomeOK}, 1},
		// A warm-up result keeps its phase and gets the default class.
		{"inferload_requests_total", map[string]string{"class": record.DefaultClass, "phase": PhaseWarmup, "outcome": OutcomeOK}, 1},
		// A failure is counted under its error kind.
		{"inferload_requests_total", map[string]string{"class": "short", "outcome": string(record.ErrHTTP5xx)}, 1},
		// An expected rejection is neither ok nor an error kind.
		{"inferload_requests_total", map[string]string{"class": "bad", "outcome": OutcomeExpectedRejection}, 1},
		// Tokens count successes only: the failure's 50 prompt tokens are out.
		{"inferload_input_tokens_total", map[string]string{"class": "short"}, 50},
		{"inferload_output_tokens_total", map[string]string{"class": record.DefaultClass}, 7},
		// One TTFT, three ITL gaps, one TPOT for the streamed success.
		{"inferload_ttft_seconds", map[string]string{"class": "short"}, 1},
		{"inferload_itl_seconds", map[string]string{"class": "short"}, 3},
		{"inferload_tpot_seconds", map[string]string{"class": "short"}, 1},
		// E2E of both successes, each in its class.
		{"inferload_e2e_seconds", map[string]string{"class": record.DefaultClass}, 1},
		// The open-loop request's queue delay.
		{"inferload_queue_delay_seconds", nil, 1},
		// The gauge reads the engine's in-flight count.
		{"inferload_in_flight_requests", nil, 7},
		// The info metric names the run.
		{"inferload_run_info", map[string]string{"run": "run-1", "version": "test"}, 1},
	}
	for _, tc := range cases {
		got, ok := value(fams, tc.name, tc.labels)
		if !ok || got != tc.want {
			t.Errorf("%s%v = %v (found %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	if got := fams["inferload_ttft_seconds"].GetMetric()[0].GetHistogram().GetSampleSum(); got != 0.1 {
		t.Errorf("TTFT sum %v s, want 0.1 (microseconds converted to seconds)", got)
	}
}

// TestAwaitScrape: a waiter is released by the next scrape, and gives up
// with an error naming the address when none comes.
func TestAwaitScrape(t *testing.T) {
	t.Parallel()
	srv, err := ServeMetrics("127.0.0.1:0", NewMetrics("r", "test"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := srv.AwaitScrape(ctx); err == nil || !strings.Contains(err.Error(), srv.Addr()) {
		t.Errorf("no scrape came, got %v, want a timeout naming %s", err, srv.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- srv.AwaitScrape(context.Background()) }()
	deadline := time.After(10 * time.Second)
	for {
		scrape(t, "http://"+srv.Addr()+"/metrics")
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		case <-deadline:
			t.Fatal("a scrape did not release the waiter")
		case <-time.After(10 * time.Millisecond): // the waiter may not have registered yet
		}
	}
}

// TestServeMetricsBadAddress: a bad listen address is an error, not a panic.
func TestServeMetricsBadAddress(t *testing.T) {
	t.Parallel()
	if _, err := ServeMetrics("127.0.0.1:99999", NewMetrics("r", "test")); err == nil {
		t.Fatal("port 99999 was accepted")
	}
}

// TestGrafanaDashboardUsesExportedMetrics: every inferload_* metric the
// dashboard queries is one Metrics exports, so the two cannot drift.
func TestGrafanaDashboardUsesExportedMetrics(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../deploy/grafana/inferload.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	m := NewMetrics("r", "test")
	for _, r := range liveResults {
		m.Observe(r)
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, f := range fams {
		exported[f.GetName()] = true
	}
	name := regexp.MustCompile(`inferload_[a-z0-9_]+`)
	queries := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, n := range name.FindAllString(tg.Expr, -1) {
				queries++
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
				if !exported[base] {
					t.Errorf("panel %q queries %s, which Metrics does not export", p.Title, n)
				}
			}
		}
	}
	if queries < 8 {
		t.Errorf("dashboard queries only %d inferload metrics", queries)
	}
}

// BenchmarkMetricsObserve is the per-request cost the collector pays
// with --serve-metrics: a streamed result with 256 tokens.
func BenchmarkMetricsObserve(b *testing.B) {
	m := NewMetrics("bench", "test")
	ev := make([]int64, 256)
	for i := range ev {
		ev[i] = int64(100_000 + i*20_000)
	}
	r := &record.Result{Class: "short", Stream: true, TTFTUS: ev[0], E2EUS: ev[255], EventsUS: ev, InputTokens: 512, OutputTokens: 256}
	b.ReportAllocs()
	for b.Loop() {
		m.Observe(r)
	}
}
