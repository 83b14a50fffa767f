package protocol

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// BenchmarkSSEParse measures the SSE reader alone on a stream of typical
// vLLM chat chunks delivered in 4 KiB reads. One op is one event.
func BenchmarkSSEParse(b *testing.B) {
	r := NewSSEReader(&repeatReader{pattern: []byte(vllmChunk), left: -1}, time.Now)
	b.SetBytes(int64(len(vllmChunk)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkChunkScan measures one typical chat chunk read by ScanChunk
// (scan=full) and by a stream's chunkShape after its first token
// (scan=shape), the path every streamed token but the first takes.
func BenchmarkChunkScan(b *testing.B) {
	data := []byte(vllmChunk[len("data: ") : len(vllmChunk)-2])
	var sh chunkShape
	for _, bm := range []struct {
		name string
		scan func([]byte, *Chunk) error
	}{{"scan=full", ScanChunk}, {"scan=shape", sh.scan}} {
		b.Run(bm.name, func(b *testing.B) {
			var c Chunk
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := bm.scan(data, &c); err != nil || !c.Content {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkEventPath is the whole per-event path of a stream: SSE parse,
// chunk scan (through the stream's chunkShape, as readStream does) and the
// timestamp, without the network.
func BenchmarkEventPath(b *testing.B) {
	r := NewSSEReader(&repeatReader{pattern: []byte(vllmChunk), left: -1}, time.Now)
	var c Chunk
	var sh chunkShape
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		ev, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		if err := sh.scan(ev.Data, &c); err != nil || !c.Content {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runRequests sends b.N requests from parallelCPU's goroutines and returns the
// client CPU time they used.
func runRequests(b *testing.B, c *OpenAI, req *Request, check func(*Trace) bool) time.Duration {
	return parallelCPU(b, func(pb *testing.PB, fail func(string)) {
		var tr Trace
		for pb.Next() {
			c.Do(context.Background(), req, &tr)
			if tr.Err != record.ErrNone || !check(&tr) {
				fail(string(tr.Err) + ": " + tr.ErrMsg)
			}
		}
	})
}

// parallelCPU runs loop from 8 goroutines per CPU (b.RunParallel) and
// returns the process's CPU time meanwhile; a loop that calls fail fails
// the benchmark once all have stopped.
func parallelCPU(b *testing.B, loop func(pb *testing.PB, fail func(string))) time.Duration {
	var failed atomic.Value
	b.SetParallelism(8)
	b.ResetTimer()
	cpu0 := cpuTime(b)
	b.RunParallel(func(pb *testing.PB) { loop(pb, func(msg string) { failed.Store(msg) }) })
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	if msg := failed.Load(); msg != nil {
		b.Fatalf("a request failed: %v", msg)
	}
	return cpu
}

// BenchmarkStreamEndToEnd streams 1000-token replies from a zero-delay
// server in another process (so its CPU is not counted), every token
// timestamped. client-CPU-s/1M-tokens is user+system CPU of this process.
// flush=token: the server flushes every event, as vLLM and the others do,
// so the client makes about one read system call per token; flush=4KiB: the
// server's buffer decides, about 17 events per read. clock=kernel reads with
// recvmsg and the kernel's receive stamps (the default on Linux),
// clock=user with read and time.Now: the pair is the stamps' cost.
func BenchmarkStreamEndToEnd(b *testing.B) {
	const tokens = 1000
	for _, mode := range []struct {
		name  string
		extra map[string]any
	}{
		{"flush=token", nil},
		{"flush=4KiB", map[string]any{"batch": true}},
	} {
		for _, clock := range []string{ClockKernel, ClockUser} {
			b.Run(mode.name+"/clock="+clock, func(b *testing.B) {
				c := newClient(b, startBenchServer(b), func(o *OpenAIOptions) { o.UserClock = clock == ClockUser })
				req := benchRequest(b, true, tokens, mode.extra)
				b.ReportAllocs()
				cpu := runRequests(b, c, req, func(tr *Trace) bool { return tr.ContentEvents == tokens && len(tr.EventsUS) == tokens })
				b.ReportMetric(cpu.Seconds()/float64(b.N*tokens)*1e6, "client-CPU-s/1M-tokens")
				b.ReportMetric(float64(b.N*tokens)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

// BenchmarkStreamGraded is BenchmarkStreamEndToEnd's flush=token,
// kernel-clock case for a graded request, which keeps its reply's chunks
// (up to record.MaxReplyKept) and reads its answer from them: the extra
// cost grading puts on a graded request, and only on one.
func BenchmarkStreamGraded(b *testing.B) {
	const tokens = 1000
	c := newClient(b, startBenchServer(b), nil)
	req := benchRequest(b, true, tokens, nil)
	req.KeepReply = record.MaxReplyKept
	b.ReportAllocs()
	cpu := runRequests(b, c, req, func(tr *Trace) bool {
		text, _ := ReplyAnswer(tr.Reply)
		return tr.ContentEvents == tokens && text != ""
	})
	b.ReportMetric(cpu.Seconds()/float64(b.N*tokens)*1e6, "client-CPU-s/1M-tokens")
}

// BenchmarkNonStreaming sends small non-streaming requests to a server in
// another process. client-CPU-µs/req is user+system CPU of this process.
func BenchmarkNonStreaming(b *testing.B) {
	c := newClient(b, startBenchServer(b), nil)
	req := benchRequest(b, false, 8, nil)
	b.ReportAllocs()
	cpu := runRequests(b, c, req, func(tr *Trace) bool { return tr.ContentEvents == 1 })
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "client-CPU-µs/req")
}

// BenchmarkNonStreamingBareHTTP is the floor BenchmarkNonStreaming stands
// on: the same request to the same server through a plain http.Client
// (default transport, keep-alive, the body read whole and not parsed, no
// stamps, no trace), from as many goroutines. What a non-streaming request
// costs beyond this is inferload's own.
func BenchmarkNonStreamingBareHTTP(b *testing.B) {
	url := startBenchServer(b) + "/chat/completions"
	body := benchRequest(b, false, 8, nil).Body
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	b.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	b.ReportAllocs()
	cpu := parallelCPU(b, func(pb *testing.PB, fail func(string)) {
		for pb.Next() {
			resp, err := client.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				fail(err.Error())
				continue
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
				fail(fmt.Sprintf("status %d, %v", resp.StatusCode, err))
			}
			resp.Body.Close()
		}
	})
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "client-CPU-µs/req")
}

// BenchmarkNonStreamingRawConn is the floor under both of the above: the
// same request written as prepared bytes on a kept TCP connection per
// goroutine and the reply read with http.ReadResponse, with no transport,
// no connection pool and no goroutine but the caller's. What is left is
// the kernel's loopback path and the scheduler's wake-ups, which no HTTP
// client can go below on this machine.
func BenchmarkNonStreamingRawConn(b *testing.B) {
	base := startBenchServer(b)
	host := strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/v1")
	body := benchRequest(b, false, 8, nil).Body
	raw := fmt.Appendf(nil, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", host, len(body), body)
	cpu := parallelCPU(b, func(pb *testing.PB, fail func(string)) {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			fail(err.Error())
			return
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		for pb.Next() {
			if _, err := conn.Write(raw); err != nil {
				fail(err.Error())
				return
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				fail(err.Error())
				return
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
				fail(fmt.Sprintf("status %d, %v", resp.StatusCode, err))
				return
			}
			resp.Body.Close()
		}
	})
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "client-CPU-µs/req")
}

// BenchmarkStreamMemory holds open streams (each has received its first
// event and waits for more) and reports the client's heap plus stack bytes
// per stream. One op is one stream; run it with -benchtime=Nx.
func BenchmarkStreamMemory(b *testing.B) {
	c := newClient(b, startBenchServer(b), nil)
	req := benchRequest(b, true, 16, map[string]any{"hold": true})
	ctx, cancel := context.WithCancel(context.Background())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	var open sync.WaitGroup
	open.Add(b.N)
	for range b.N {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tr Trace
			var once sync.Once
			opened := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
				GotFirstResponseByte: func() { once.Do(open.Done) },
			})
			c.Do(opened, req, &tr)
		}()
	}
	open.Wait()
	runtime.GC()
	runtime.ReadMemStats(&after)
	perStream := (after.HeapInuse + after.StackInuse) - (before.HeapInuse + before.StackInuse)
	cancel()
	wg.Wait()
	b.ReportMetric(float64(perStream)/float64(b.N), "client-B/stream")
}

// BenchmarkEndlessStreamMemory points b.N streams at a server that streams
// events as fast as it can and never ends (max_tokens unset, so only the
// total timeout stops them: the case where nothing but record.MaxEventsKept
// bounds a trace), and reports the client's peak heap plus stacks and its
// peak RSS growth per stream. One op is one stream; the streams run for
// INFERLOAD_ENDLESS_SECONDS (default 60).
//
// events=small: typical 170-byte chunks, millions per stream; events=giant:
// 200 KiB events, just under DefaultMaxEventSize, so the reader's buffers
// grow to their limit.
func BenchmarkEndlessStreamMemory(b *testing.B) {
	secs := 60
	if v, err := strconv.Atoi(os.Getenv("INFERLOAD_ENDLESS_SECONDS")); err == nil && v > 0 {
		secs = v
	}
	for _, giant := range []bool{false, true} {
		name := map[bool]string{false: "events=small", true: "events=giant"}[giant]
		b.Run(name, func(b *testing.B) { endlessStreams(b, time.Duration(secs)*time.Second, giant) })
	}
}

func endlessStreams(b *testing.B, d time.Duration, giant bool) {
	c := newClient(b, startBenchServer(b), func(o *OpenAIOptions) { o.TotalTimeout = d })
	req := benchRequest(b, true, 0, map[string]any{"endless": true, "giant": giant})
	req.MaxTokens = 0
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	rss0 := peakRSS(b)
	stop := make(chan struct{})
	peak := make(chan uint64)
	go samplePeak(stop, peak)
	var wg sync.WaitGroup
	events := make([]int, b.N)
	kept := make([]int, b.N)
	for i := range b.N {
		wg.Go(func() {
			var tr Trace
			c.Do(context.Background(), req, &tr)
			events[i], kept[i] = tr.ContentEvents, len(tr.EventsUS)
		})
	}
	wg.Wait()
	close(stop)
	heap := <-peak - (before.HeapInuse + before.StackInuse)
	total := 0
	for i := range events {
		total += events[i]
		if kept[i] > record.MaxEventsKept {
			b.Fatalf("stream %d kept %d offsets, more than %d", i, kept[i], record.MaxEventsKept)
		}
	}
	b.ReportMetric(float64(heap)/float64(b.N), "peak-heap-B/stream")
	b.ReportMetric(float64(peakRSS(b)-rss0)/float64(b.N), "peak-RSS-growth-B/stream")
	b.ReportMetric(float64(total)/float64(b.N), "events/stream")
}

// samplePeak reports the highest heap-plus-stack in use, sampled every
// 50 ms until stop closes.
func samplePeak(stop <-chan struct{}, peak chan<- uint64) {
	var m runtime.MemStats
	var hi uint64
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		runtime.ReadMemStats(&m)
		hi = max(hi, m.HeapInuse+m.StackInuse)
		select {
		case <-stop:
			peak <- hi
			return
		case <-t.C:
		}
	}
}

// peakRSS is the process's peak resident set (VmHWM) in bytes.
func peakRSS(b *testing.B) uint64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}
