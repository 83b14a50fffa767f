package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"
)

// finalTimings is the usage chunk's llama.cpp-style timings.
type finalTimings struct {
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Timings *struct {
		CacheN      int     `json:"cache_n"`
		PromptN     int     `json:"prompt_n"`
		PromptMS    float64 `json:"prompt_ms"`
		PredictedN  int     `json:"predicted_n"`
		PredictedMS float64 `json:"predicted_ms"`
		QueueMS     float64 `json:"queue_ms"`
	} `json:"timings"`
}

// TestFinalChunkCarriesEngineTimings: the server never claims more time
// than the client saw pass (its queue and prefill fit in the client's
// time to first token, all three in the client's end-to-end time, to 1 ms
// of clock granularity), counts agree with usage, and more requests than
// the batch holds make some of them queue.
func TestFinalChunkCarriesEngineTimings(t *testing.T) {
	t.Parallel()
	_, url, client := newTestServer(t, func(c *Config) { c.Profile.MaxNumSeqs = 2 })
	const n = 8
	var wg sync.WaitGroup
	replies := make([]reply, n)
	e2e := make([]time.Duration, n)
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf(`{"model":"tiny-sim","messages":[{"role":"user","content":"one two three %d"}],"max_tokens":8,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`, i)
			start := time.Now()
			replies[i] = post(context.Background(), client, url+"/v1/chat/completions", body)
			e2e[i] = time.Since(start)
		})
	}
	wg.Wait()
	queued := 0
	for i, r := range replies {
		if r.err != nil || r.status != 200 || len(r.events) < 3 {
			t.Fatalf("request %d: %v status %d, %d events", i, r.err, r.status, len(r.events))
		}
		var f finalTimings
		if err := json.Unmarshal([]byte(r.events[len(r.events)-2]), &f); err != nil || f.Timings == nil {
			t.Fatalf("request %d: final chunk %s: %v", i, r.events[len(r.events)-2], err)
		}
		tm := f.Timings
		if tm.PredictedN != f.Usage.CompletionTokens || tm.PromptN+tm.CacheN != f.Usage.PromptTokens {
			t.Errorf("request %d: timings %+v disagree with usage %+v", i, *tm, f.Usage)
		}
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		if tm.QueueMS+tm.PromptMS+tm.PredictedMS > ms(e2e[i])+1 {
			t.Errorf("request %d: server time %.3f+%.3f+%.3f ms exceeds the client's %.3f ms", i, tm.QueueMS, tm.PromptMS, tm.PredictedMS, ms(e2e[i]))
		}
		if tm.PromptMS <= 0 || tm.PredictedMS <= 0 {
			t.Errorf("request %d: no prefill or decode time: %+v", i, *tm)
		}
		if tm.QueueMS > 0 {
			queued++
		}
	}
	if queued == 0 {
		t.Errorf("%d requests on a batch of 2, none queued", n)
	}
}
