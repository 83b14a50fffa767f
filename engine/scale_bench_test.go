package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
)

// BenchmarkTTFTAtScale (BENCHMARKS.md, "TTFT at scale") asks how far
// inferload's TTFT is from the truth when it runs many streams on a small
// machine. A mock server in a child process streams 32 tokens, the first
// scaleTTFT after the request and the rest scaleITL apart; a probe, another
// child process, sends one request at a time on its own connection (kernel
// clock) and measures the same server meanwhile. Each sub-benchmark runs
// closed-loop users for scalePhase (the first scaleWarmup is warm-up)
// and reports inferload's TTFT p50 and mean minus the probe's, with the
// kernel clock and with the user-space one, and the read lag the kernel
// clock saw. Streams come from INFERLOAD_SCALE_STREAMS (default 16,256,1000),
// the phase's length from INFERLOAD_SCALE_SECONDS (default 14; more gives
// the probe more samples).
func BenchmarkTTFTAtScale(b *testing.B) {
	url := startScaleChild(b, scaleServerEnv, "1", nil)
	for _, streams := range scaleStreams(b) {
		for _, clock := range []string{protocol.ClockKernel, protocol.ClockUser} {
			b.Run(fmt.Sprintf("streams=%d/clock=%s", streams, clock), func(b *testing.B) {
				for b.Loop() {
					scaleRun(b, url, streams, clock)
				}
			})
		}
	}
}

// The mock server's stream, the phase's length, and the probe's pace.
const (
	scaleServerEnv = "INFERLOAD_BENCH_SCALE_SERVER"
	scaleProbeEnv  = "INFERLOAD_BENCH_SCALE_PROBE"
	scaleTTFT      = 50 * time.Millisecond
	scaleITL       = 20 * time.Millisecond
	scaleTokens    = 32
	scaleWarmup    = 4 * time.Second
	probeGap       = 10 * time.Millisecond // between the probe's requests
)

// scalePhase is the length of each phase.
var scalePhase = func() time.Duration {
	if s, err := strconv.Atoi(os.Getenv("INFERLOAD_SCALE_SECONDS")); err == nil && s > int(scaleWarmup/time.Second)+1 {
		return time.Duration(s) * time.Second
	}
	return 14 * time.Second
}()

func scaleStreams(b *testing.B) []int {
	spec := os.Getenv("INFERLOAD_SCALE_STREAMS")
	if spec == "" {
		return []int{16, 256, 1000}
	}
	var out []int
	for f := range strings.SplitSeq(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("INFERLOAD_SCALE_STREAMS: %q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out
}

// scaleRun runs one phase and the probe beside it.
func scaleRun(b *testing.B, url string, streams int, clock string) {
	client, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: url + "/v1", UserClock: clock == protocol.ClockUser})
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	probe := make(chan probeResult, 1)
	go func() { probe <- runProbe(b, url) }()
	cpu0, wall0 := cpuTime(), time.Now()
	if _, err := serverTTFT(url); err != nil { // the previous phase's
		b.Fatal(err)
	}
	warm := time.AfterFunc(scaleWarmup, func() { _, _ = serverTTFT(url) }) // the count starts afresh
	defer warm.Stop()
	// The users start spread over one request's length, so their requests
	// reach the server evenly, as the probe's do, not in one wave a cycle.
	cycle := scaleTTFT + scaleTokens*scaleITL
	users := func(el time.Duration) int { return min(streams, 1+int(int64(streams)*int64(el)/int64(cycle))) }
	rs := runPhase(b, Config{Client: client, Source: fixedSource{}, Render: render, Shape: ClosedLoop{Users: streams, Active: users},
		Duration: scalePhase, Warmup: scaleWarmup, Grace: 30 * time.Second})
	own, err := serverTTFT(url)
	if err != nil {
		b.Fatal(err)
	}
	cpuPct := 100 * (cpuTime() - cpu0).Seconds() / time.Since(wall0).Seconds() / float64(nCPU())
	p := <-probe
	var ttft, lag []int64
	failed := 0
	for _, r := range rs {
		switch {
		case r.Warmup:
		case !r.OK():
			failed++
		default:
			ttft = append(ttft, r.TTFTUS)
			lag = append(lag, r.ReadLagUS)
		}
	}
	if len(ttft) == 0 || p.N == 0 {
		b.Fatalf("no measured request (%d failed) or no probe sample (%d)", failed, p.N)
	}
	p50, mean := float64(percentileUS(ttft, 0.5))/1e3, meanUS(ttft)/1e3
	b.ReportMetric(p50-p.P50MS, "ttft-p50-err-ms")
	b.ReportMetric(mean-p.MeanMS, "ttft-mean-err-ms")
	b.ReportMetric(p50, "ttft-p50-ms")
	b.ReportMetric(p.P50MS, "probe-p50-ms")
	b.ReportMetric(own, "server-own-p50-ms")
	b.ReportMetric(float64(p.N), "probe-samples")
	b.ReportMetric(float64(percentileUS(lag, 0.9))/1e3, "read-lag-p90-ms")
	b.ReportMetric(cpuPct, "client-cpu-%")
	b.ReportMetric(float64(len(ttft)), "requests")
	b.ReportMetric(float64(failed), "failed")
}

func meanUS(v []int64) float64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return float64(s) / float64(max(len(v), 1))
}

// probeResult is what the probe child prints: its TTFT over the measured
// part of the phase.
type probeResult struct {
	N      int     `json:"n"`
	P50MS  float64 `json:"p50_ms"`
	MeanMS float64 `json:"mean_ms"`
}

// runProbe runs the probe child for one phase and reads its result.
func runProbe(b *testing.B, url string) probeResult {
	var out probeResult
	startScaleChild(b, scaleProbeEnv, url, func(r *bufio.Reader) {
		line, err := r.ReadString('\n')
		if err == nil {
			err = json.Unmarshal([]byte(line), &out)
		}
		if err != nil {
			b.Errorf("probe: %v", err)
		}
	})
	return out
}

// startScaleChild starts the test binary as the server or the probe. With
// read nil it returns the first line the child prints (the server's URL)
// and kills the child when the benchmark ends; else read consumes the
// child's output until it exits.
func startScaleChild(b *testing.B, env, val string, read func(*bufio.Reader)) string {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+val)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	if read != nil {
		read(r)
		_ = cmd.Wait()
		return ""
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := r.ReadString('\n')
	if err != nil {
		b.Fatalf("server child: %v", err)
	}
	return strings.TrimSpace(line)
}

// serveScale is the mock server: scaleTokens content events (1 when the
// request says X-Tokens: 1, as the probe's do), the first scaleTTFT after
// the request arrived, then one every scaleITL (each timed from the
// request's arrival, so a late write does not delay the rest). It keeps
// its own TTFT (request read → first token written) of the load's
// requests; GET /stats returns their median since the previous GET and
// starts afresh.
func serveScale() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("http://" + ln.Addr().String())
	chunk := []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok\"}}]}\n\n")
	var mu sync.Mutex
	var own []int64
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			mu.Lock()
			slices.Sort(own)
			p50 := percentileUS(own, 0.5)
			own = own[:0]
			mu.Unlock()
			fmt.Fprintf(w, "%d\n", p50)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		start := time.Now()
		tokens := scaleTokens
		if r.Header.Get("X-Tokens") == "1" {
			tokens = 1
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		tm := time.NewTimer(scaleTTFT)
		defer tm.Stop()
		for i := range tokens {
			select {
			case <-tm.C:
			case <-r.Context().Done():
				return
			}
			_, _ = w.Write(chunk)
			w.(http.Flusher).Flush()
			if i == 0 && tokens > 1 {
				mu.Lock()
				own = append(own, time.Since(start).Microseconds())
				mu.Unlock()
			}
			tm.Reset(time.Until(start.Add(scaleTTFT + time.Duration(i+1)*scaleITL)))
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
}

// serverTTFT asks the mock server for the median of its own TTFT since
// the last ask, in ms.
func serverTTFT(url string) (float64, error) {
	resp, err := http.Get(url + "/stats")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var us int64
	_, err = fmt.Fscan(resp.Body, &us)
	return float64(us) / 1e3, err
}

// probe sends one request at a time (probeGap apart) on its own
// connection, on the kernel clock, over the measured part of a phase
// (scaleWarmup to scalePhase − 1 s), and prints its TTFT as JSON.
func probe(url string) {
	c, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: url + "/v1", MaxConns: 1, Headers: map[string]string{"X-Tokens": "1"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	req := &protocol.Request{API: protocol.APIChat, Body: []byte(`{}`), Stream: true, MaxTokens: 1}
	start := time.Now()
	var ttft []int64
	var tr protocol.Trace
	for time.Since(start) < scalePhase-time.Second {
		c.Do(context.Background(), req, &tr)
		if time.Since(start) > scaleWarmup && tr.Err == record.ErrNone && !tr.FirstToken.IsZero() {
			ttft = append(ttft, tr.FirstToken.Sub(tr.Sent).Microseconds())
		}
		<-time.After(probeGap)
	}
	slices.Sort(ttft)
	out := probeResult{N: len(ttft)}
	if len(ttft) > 0 {
		out.P50MS, out.MeanMS = float64(ttft[len(ttft)/2])/1e3, meanUS(ttft)/1e3
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}

// cpuTime is this process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func nCPU() int { return runtime.GOMAXPROCS(0) }
