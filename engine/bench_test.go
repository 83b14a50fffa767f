package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
)

// These benchmarks measure the client end to end (engine + protocol)
// against local servers. They back the figures in BENCHMARKS.md.

func benchClient(b *testing.B, url string) *protocol.OpenAI {
	b.Helper()
	c, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: url + "/v1"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// tinyStream answers with one content chunk, usage and [DONE] at once.
func tinyStream(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"+
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
}

type constantArrivals struct {
	mu  sync.Mutex
	gap time.Duration
	n   int
}

func (c *constantArrivals) Next() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := time.Duration(c.n) * c.gap
	c.n++
	return d
}

func runPhase(b *testing.B, cfg Config) []*record.Result {
	b.Helper()
	e, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	out := make(chan *record.Result, 4096)
	go func() { _ = e.Run(context.Background(), out) }()
	var rs []*record.Result
	for r := range out {
		rs = append(rs, r)
	}
	return rs
}

func percentileUS(vals []int64, q float64) int64 {
	slices.Sort(vals)
	if len(vals) == 0 {
		return 0
	}
	return vals[min(len(vals)-1, int(q*float64(len(vals))))]
}

// BenchmarkOpenLoopSendLag: 1,000 requests/s on an absolute schedule against
// a zero-delay server; the figure is the P99 of (actual start − intended
// start). Target: ≤ 2 ms.
func BenchmarkOpenLoopSendLag(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(tinyStream))
	defer srv.Close()
	client := benchClient(b, srv.URL)
	const n = 3000 // three seconds at 1,000/s
	for b.Loop() {
		rs := runPhase(b, Config{Client: client, Source: fixedSource{}, Render: render,
			Shape: OpenLoop{Arrivals: &constantArrivals{gap: time.Millisecond}}, Requests: n, Grace: 10 * time.Second})
		lags := make([]int64, 0, len(rs))
		failed := 0
		for _, r := range rs {
			lags = append(lags, r.QueueDelayUS)
			if !r.OK() {
				failed++
			}
		}
		if failed > 0 {
			b.Fatalf("%d of %d requests failed", failed, len(rs))
		}
		b.ReportMetric(float64(percentileUS(lags, 0.50)), "p50-lag-µs")
		b.ReportMetric(float64(percentileUS(lags, 0.99)), "p99-lag-µs")
		b.ReportMetric(float64(percentileUS(lags, 1)), "max-lag-µs")
	}
}

// BenchmarkTTFTAccuracy: 16 concurrent streams; the server notes when it
// flushed each first token and when it flushed the reply's last bytes
// (the [DONE] marker), the client measures their arrival; the figures are
// the P50 and P99 of the differences (client overhead on TTFT and on the
// end of a reply, hence E2E). Target: ≤ 1 ms for both. clock=kernel
// stamps arrivals with the kernel's receive timestamps (the default on
// Linux), clock=user when the client's read returned.
func BenchmarkTTFTAccuracy(b *testing.B) {
	for _, clock := range []string{protocol.ClockKernel, protocol.ClockUser} {
		b.Run("clock="+clock, func(b *testing.B) { ttftAccuracy(b, clock == protocol.ClockUser) })
	}
}

func ttftAccuracy(b *testing.B, userClock bool) {
	var mu sync.Mutex
	sentAt, doneAt := map[string]time.Time{}, map[string]time.Time{}
	const tokens = 4
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Req")
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		for i := range tokens {
			time.Sleep(2 * time.Millisecond) // simulated prefill, then decode steps
			at := time.Now()
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
			w.(http.Flusher).Flush()
			if i == 0 {
				mu.Lock()
				sentAt[id] = at
				mu.Unlock()
			}
		}
		time.Sleep(time.Millisecond) // the end marker is its own segment, as a server's last step is
		at := time.Now()
		fmt.Fprint(w, "data: [DONE]\n\n")
		w.(http.Flusher).Flush()
		mu.Lock()
		doneAt[id] = at
		mu.Unlock()
	}))
	defer srv.Close()
	body, _ := protocol.OpenAIBody{Prompt: "x", MaxTokens: tokens, Stream: true}.Render(protocol.APIChat)
	var diffs, endDiffs []int64
	var dmu sync.Mutex
	for b.Loop() {
		var wg sync.WaitGroup
		for w := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					id := fmt.Sprintf("%d-%d", w, i)
					c, _ := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: srv.URL + "/v1", Headers: map[string]string{"X-Req": id}, UserClock: userClock})
					var tr protocol.Trace
					c.Do(context.Background(), &protocol.Request{API: protocol.APIChat, Body: body, Stream: true, MaxTokens: tokens}, &tr)
					c.Close()
					mu.Lock()
					s, d := sentAt[id], doneAt[id]
					mu.Unlock()
					if tr.Err != record.ErrNone || tr.FirstToken.IsZero() {
						continue
					}
					dmu.Lock()
					diffs = append(diffs, tr.FirstToken.Sub(s).Microseconds())
					endDiffs = append(endDiffs, tr.End.Sub(d).Microseconds())
					dmu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(percentileUS(diffs, 0.50)), "p50-ttft-err-µs")
	b.ReportMetric(float64(percentileUS(diffs, 0.99)), "p99-ttft-err-µs")
	b.ReportMetric(float64(percentileUS(endDiffs, 0.50)), "p50-end-err-µs")
	b.ReportMetric(float64(percentileUS(endDiffs, 0.99)), "p99-end-err-µs")
}

// holdServerEnv makes the test binary act as a stream-holding server in a
// child process, so the client's memory is measured alone.
const holdServerEnv = "INFERLOAD_BENCH_HOLD_SERVER"

// serveHolding streams one token every 200ms for 10s per request.
func serveHolding() {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range 50 {
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-time.After(200 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	srv.Start()
	fmt.Println(srv.URL)
	select {}
}

// startCounter is a client that closes all once want requests have begun.
type startCounter struct {
	protocol.Client
	n    atomic.Int64
	want int64
	all  chan struct{}
}

func (c *startCounter) Do(ctx context.Context, req *protocol.Request, t *protocol.Trace) {
	if c.n.Add(1) == c.want {
		close(c.all)
	}
	c.Client.Do(ctx, req, t)
}

// BenchmarkConcurrentStreams10k: 10,000 closed-loop users each holding a
// stream open against a server in another process; the figure is the
// client's heap+stack growth per open stream. Target: ≤ 64 KiB.
func BenchmarkConcurrentStreams10k(b *testing.B) {
	const streams = 10000
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), holdServerEnv+"=1")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	buf := make([]byte, 128)
	n, err := stdout.Read(buf)
	if err != nil {
		b.Fatal(err)
	}
	url := strings.TrimSpace(string(buf[:n]))
	client := benchClient(b, url)
	for b.Loop() {
		runtime.GC()
		var before, peak runtime.MemStats
		runtime.ReadMemStats(&before)
		counted := &startCounter{Client: client, want: streams, all: make(chan struct{})}
		e, err := New(Config{Client: counted, Source: fixedSource{}, Render: render,
			Shape: ClosedLoop{Users: streams}, Requests: streams, Grace: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		out := make(chan *record.Result, streams)
		go func() { _ = e.Run(context.Background(), out) }()
		select {
		case <-counted.all:
		case <-time.After(30 * time.Second):
		}
		open := e.InFlight()
		runtime.ReadMemStats(&peak)
		failed := 0
		for r := range out {
			if !r.OK() {
				failed++
			}
		}
		used := (peak.HeapInuse + peak.StackInuse) - (before.HeapInuse + before.StackInuse)
		b.ReportMetric(float64(open), "open-streams")
		b.ReportMetric(float64(used)/float64(max(open, 1))/1024, "KiB/stream")
		b.ReportMetric(float64(failed), "failed")
	}
}
