package observe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/inferload/inferload/record"
)

// collector gathers an observer's output and signals when every source
// has delivered enough samples.
type collector struct {
	mu      sync.Mutex
	samples map[string][]Sample
	events  []record.Event
	want    int
	sources int
	done    chan struct{}
	once    sync.Once
}

func newCollector(sources, want int) *collector {
	return &collector{samples: map[string][]Sample{}, want: want, sources: sources, done: make(chan struct{})}
}

func (c *collector) sample(s Sample) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.samples[s.Source] = append(c.samples[s.Source], s)
	enough := 0
	for _, v := range c.samples {
		if len(v) >= c.want {
			enough++
		}
	}
	if enough >= c.sources {
		c.once.Do(func() { close(c.done) })
	}
}

func (c *collector) event(e record.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, e)
}

// TestScrapeFaultsLeaveGaps: every kind of bad endpoint yields marked gaps
// with a specific error, a good but slow one still yields data, the
// client's own sampler keeps going, and Stop returns promptly with no
// goroutine left behind.
func TestScrapeFaultsLeaveGaps(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	good, err := os.ReadFile("testdata/vllm.prom")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{not: prometheus}\n")) })
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		for range 10000 {
			_, _ = w.Write([]byte("vllm:num_requests_waiting 1\n"))
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(60 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(good)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)

	tests := []struct {
		path    string
		wantErr string // "" means the source must deliver data
	}{
		{"/hang", "deadline exceeded"},             // a scrape that never answers times out
		{"/missing", "HTTP 404"},                   // a wrong path is reported with its status
		{"/garbage", "not Prometheus text format"}, // a body that is not the text format
		{"/huge", "size limit"},                    // a body past MaxBody is cut off, not read whole
		{"/slow", ""},                              // slow but within the timeout: data, with its latency
	}
	var targets []Target
	for _, tt := range tests {
		targets = append(targets, Target{URL: srv.URL + tt.path})
	}
	col := newCollector(len(tests)+1, 2)
	obs := Start(context.Background(), time.Now(), Config{Scrape: targets, Interval: 100 * time.Millisecond,
		Timeout: time.Second, MaxBody: 64 << 10, Self: true, OnSample: col.sample, OnEvent: col.event})
	select {
	case <-col.done:
	case <-time.After(10 * time.Second):
		t.Fatal("sources did not deliver 2 samples each within 10s")
	}
	stopped := make(chan []Sample)
	go func() { stopped <- obs.Stop() }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return")
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	for _, tt := range tests {
		for _, s := range col.samples[srv.URL+tt.path] {
			if tt.wantErr == "" {
				if s.Gap || s.Values[OutputTokensPerS] < 0 || s.LatencyMS < 60 || s.Kind != "vllm" {
					t.Errorf("%s: sample %+v, want data after ≥60 ms", tt.path, s)
				}
				continue
			}
			if !s.Gap || !strings.Contains(s.Error, tt.wantErr) {
				t.Errorf("%s: sample %+v, want a gap with %q", tt.path, s, tt.wantErr)
			}
		}
	}
	gaps := 0
	for _, e := range col.events {
		if e.Kind == EventScrapeGap {
			gaps++
		}
	}
	if gaps != 4 {
		t.Errorf("%d scrape_gap events, want one per failing source (4): %+v", gaps, col.events)
	}
	if c := col.samples["client"]; len(c) < 2 || c[1].Values[ClientGoroutines] <= 0 || c[1].Values[ClientRSSMiB] <= 0 {
		t.Errorf("client samples = %+v", c)
	}
}

// TestSampleKeyedToRunClock: a sample's second is that of the middle of
// its scrape on the run clock, so it lines up with series.jsonl's t_s.
func TestSampleKeyedToRunClock(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("vllm:num_requests_waiting 2\nvllm:num_requests_running 1\n"))
	}))
	defer srv.Close()
	sc := &scraper{url: srv.URL, client: srv.Client(), maxBody: DefaultMaxBody}
	start := time.Now().Add(-3500 * time.Millisecond) // the run began 3.5 s ago
	s := sc.sample(context.Background(), start)
	if s.TS != 3 || s.TimeUS < 3_500_000 || s.Values[QueueDepth] != 2 || s.Kind != "vllm" {
		t.Fatalf("sample = %+v, want second 3 with queue depth 2", s)
	}
}
