package sim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchServer starts a server for p behind httptest with a transport that
// allows conns connections to it.
func benchServer(b *testing.B, p Profile, conns int) (*Server, string, *http.Client) {
	b.Helper()
	s, err := New(Config{Profile: p, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	b.Cleanup(func() {
		s.Close()
		ts.Close()
		tr.CloseIdleConnections()
	})
	return s, ts.URL, &http.Client{Transport: tr}
}

// countTokens reads an SSE body and counts content chunks, the way a lean
// client would: no JSON decoding, one pass over the bytes.
func countTokens(resp *http.Response) (int, error) {
	defer resp.Body.Close()
	r := bufio.NewReaderSize(resp.Body, 4<<10)
	n := 0
	for {
		line, err := r.ReadSlice('\n')
		if bytes.Contains(line, []byte(`"text":"`)) && !bytes.Contains(line, []byte(`"text":""`)) {
			n++
		}
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// BenchmarkStreamedTokens measures how many tokens the simulator streams
// per second of wall time, clients included, when the simulated GPU is
// not the limit. With 20 µs steps the handlers fall behind and write
// several tokens per flush; with 1 ms steps and 256 streams every token is
// its own write and flush, the worst case. On one core:
//
//	go test ./sim -run '^$' -bench StreamedTokens -cpu 1 -benchtime 400x
func BenchmarkStreamedTokens(b *testing.B) {
	cases := []struct {
		name    string
		step    time.Duration
		streams int
	}{
		{"step=20µs/streams=64", 20 * time.Microsecond, 64},
		{"step=1ms/streams=256", time.Millisecond, 256},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) { streamTokens(b, bc.step, bc.streams) })
	}
}

func streamTokens(b *testing.B, step time.Duration, streams int) {
	p, _ := LookupProfile("tiny")
	p.MaxNumSeqs, p.MaxNumBatchedTokens, p.NumGPUBlocks = 256, 8192, 32768
	p.Cost = CostModel{StepOverhead: step}
	const perRequest = 1024
	_, url, c := benchServer(b, p, streams)
	body := fmt.Sprintf(`{"prompt":"count to a thousand","max_tokens":%d,"ignore_eos":true,"stream":true}`, perRequest)
	var tokens, next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range streams {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				resp, err := c.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				n, err := countTokens(resp)
				if err != nil || n != perRequest {
					b.Errorf("got %d tokens (err %v), want %d", n, err, perRequest)
					return
				}
				tokens.Add(int64(n))
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(tokens.Load())/time.Since(start).Seconds(), "tokens/s")
}

// BenchmarkConcurrentStreams holds 5,000 streams open at once against an
// engine whose batch takes them all (50 ms steps, 64 tokens each), and
// reports memory, step lateness and whether every stream completed:
//
//	go test ./sim -run '^$' -bench ConcurrentStreams -benchtime 1x
func BenchmarkConcurrentStreams(b *testing.B) {
	const streams, perRequest = 5000, 64
	p, _ := LookupProfile("tiny")
	p.MaxNumSeqs, p.MaxNumBatchedTokens, p.NumGPUBlocks, p.MaxModelLen = streams, 1<<16, 32768, 256
	p.Cost = CostModel{StepOverhead: 50 * time.Millisecond}
	s, url, c := benchServer(b, p, streams)
	body := fmt.Sprintf(`{"prompt":"hold the line","max_tokens":%d,"ignore_eos":true,"stream":true}`, perRequest)
	for range b.N {
		var before, peak runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var completed, started atomic.Int64
		allStarted := make(chan struct{})
		var wg sync.WaitGroup
		begin := time.Now()
		for range streams {
			wg.Go(func() {
				resp, err := c.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				if started.Add(1) == streams {
					close(allStarted)
				}
				if n, err := countTokens(resp); err == nil && n == perRequest {
					completed.Add(1)
				}
			})
		}
		select {
		case <-allStarted:
			runtime.ReadMemStats(&peak)
		case <-time.After(time.Minute):
			b.Fatal("streams did not all start within a minute")
		}
		goroutines := runtime.NumGoroutine()
		wg.Wait()
		elapsed := time.Since(begin)
		st := s.StepStats()
		b.ReportMetric(float64(completed.Load()), "completed")
		b.ReportMetric(float64(peak.HeapInuse-before.HeapInuse)/streams/1024, "KiB-heap/stream")
		b.ReportMetric(float64(goroutines), "goroutines")
		b.ReportMetric(float64(streams*perRequest)/elapsed.Seconds(), "tokens/s")
		b.ReportMetric(float64(st.LatenessP50.Microseconds()), "lateness-p50-µs")
		b.ReportMetric(float64(st.LatenessP99.Microseconds()), "lateness-p99-µs")
		b.ReportMetric(float64(st.LatenessMax.Microseconds()), "lateness-max-µs")
		if completed.Load() != streams {
			b.Errorf("%d of %d streams completed", completed.Load(), streams)
		}
	}
}

// BenchmarkEngineStep is the engine alone: decode steps of a full batch
// of 256 sequences with contexts of about 1,500 tokens; a sequence that
// finishes is replaced at once, so some steps also prefill.
//
//	go test ./sim -run '^$' -bench EngineStep
func BenchmarkEngineStep(b *testing.B) {
	p, _ := LookupProfile("a100-7b")
	p.NumGPUBlocks, p.GPU.Count = p.MaxNumSeqs*p.MaxModelLen/p.BlockSize, 0
	e, err := NewEngine(p)
	if err != nil {
		b.Fatal(err)
	}
	req := Request{PromptTokens: 1000, OutputTokens: 1000}
	for range p.MaxNumSeqs {
		if _, err := e.Add(req, 0); err != nil {
			b.Fatal(err)
		}
	}
	now := time.Duration(0)
	for e.Waiting() > 0 { // admit and prefill everyone
		now = e.Step(now).End()
	}
	b.ReportAllocs()
	b.ResetTimer()
	tokens := 0
	for range b.N {
		r := e.Step(now)
		now = r.End()
		tokens += len(r.Tokens)
		for _, ev := range r.Tokens {
			if ev.Final {
				_, _ = e.Add(req, now)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(tokens, 1)), "ns/token")
}
