package record

import (
	"math"
	"testing"
)

// TestTTFTByInput: each bin holds the TTFTs of its measured streamed
// successes, as the summary's TTFT holds the run's, with the same
// percentiles: a run whose prompts share one bin has one bin whose figures
// are metrics.ttft_ms exactly.
func TestTTFTByInput(t *testing.T) {
	t.Parallel()
	a := NewAggregate()
	var by TTFTByInput
	add := func(r *Result) {
		a.Add(r)
		by.Add(r)
	}
	for i := range int64(200) {
		// 100 to 107 tokens: bin 26, [2^6.5, 2^6.75) ≈ [90.5, 107.6).
		add(&Result{ID: uint64(i), Stream: true, TTFTUS: 50_000 + i*i*37, E2EUS: 3e6, OutputTokens: 3,
			EventsUS: []int64{50_000 + i*i*37, 2e6}, PromptTokensSent: 110, InputTokens: 100 + int(i%8)})
	}
	// None of these is a TTFT sample: warm-up, failure, not streamed, no
	// content event.
	add(&Result{Stream: true, Warmup: true, TTFTUS: 9e6, E2EUS: 9e6, PromptTokensSent: 100})
	add(&Result{Stream: true, TTFTUS: 9e6, E2EUS: 9e6, PromptTokensSent: 100, Error: ErrHTTP5xx})
	add(&Result{TTFTUS: 9e6, E2EUS: 9e6, PromptTokensSent: 100})
	add(&Result{Stream: true, E2EUS: 9e6, PromptTokensSent: 100})
	bins := by.Bins()
	if len(bins) != 1 {
		t.Fatalf("%d bins, want 1: %+v", len(bins), bins)
	}
	want := a.Summary(RunInfo{}).Metrics.TTFT
	if bins[0].TTFT != want {
		t.Errorf("bin TTFT %+v, want the summary's %+v", bins[0].TTFT, want)
	}
	if lo, hi := math.Pow(2, 26.0/4), math.Pow(2, 27.0/4); bins[0].MidTokens <= lo || bins[0].MidTokens >= hi {
		t.Errorf("bin middle %v tokens, want inside [%v, %v)", bins[0].MidTokens, lo, hi)
	}
}

// TestTTFTByInputBins: a prompt's length is its usage count, else the
// client's own; a record with neither is in no bin; bins come shortest
// first.
func TestTTFTByInputBins(t *testing.T) {
	t.Parallel()
	var by TTFTByInput
	ok := func(input, sent int) *Result {
		return &Result{Stream: true, TTFTUS: 1000, E2EUS: 2000, InputTokens: input, PromptTokensSent: sent}
	}
	by.Add(ok(4000, 100)) // usage says 4000: bin of 4000, not of 100
	by.Add(ok(0, 100))    // no usage: the client's 100
	by.Add(ok(0, 0))      // no length at all: left out
	bins := by.Bins()
	if len(bins) != 2 {
		t.Fatalf("%d bins, want 2", len(bins))
	}
	if bins[0].MidTokens > 110 || bins[1].MidTokens < 3600 || bins[0].TTFT.Count != 1 || bins[1].TTFT.Count != 1 {
		t.Errorf("bins %+v, want ~100 tokens then ~4000, one request each", bins)
	}
}
