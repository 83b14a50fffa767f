package record

import (
	"maps"
	"math"
	"slices"
)

// InputTTFTBinsPerDoubling sets the width of an input-length bin of
// TTFTByInput: four to a doubling (~19% wide), so 100 to 100 000 tokens
// fits in 40 bins.
const InputTTFTBinsPerDoubling = 4

// TTFTByInput is TTFT by prompt length in fine, log-spaced bins: each bin
// a full-precision Hist of the TTFTs of its measured streamed successes,
// the records and the rule (TTFTUS) of the summary's TTFT, so a bin's
// percentiles are exactly what summary.json would carry for those
// requests. The length is inputTokens' (the server's usage count, else the
// client's own); a record with neither is left out.
//
// Its size is bounded by the number of length bins used (a few dozen at
// most), not by the number of records. The zero value is empty and ready;
// not safe for concurrent use.
type TTFTByInput struct {
	bins map[int]*Hist
}

// InputTTFT is one input-length bin of TTFTByInput.
type InputTTFT struct {
	// MidTokens is the bin's geometric middle, in prompt tokens.
	MidTokens float64
	// TTFT summarises the bin's TTFTs in milliseconds, as summary.json's
	// metrics.ttft_ms does the run's.
	TTFT Stats
}

// Add folds one record in.
func (t *TTFTByInput) Add(r *Result) {
	if !r.MeasuredSuccess() {
		return
	}
	ttft, ok := TTFTUS(r)
	n := inputTokens(r)
	if !ok || n <= 0 {
		return
	}
	if t.bins == nil {
		t.bins = map[int]*Hist{}
	}
	b := inputTTFTBin(n)
	h := t.bins[b]
	if h == nil {
		h = NewHist()
		t.bins[b] = h
	}
	h.Record(ttft)
}

// Bins returns every bin that holds a TTFT, shortest prompts first.
func (t *TTFTByInput) Bins() []InputTTFT {
	out := make([]InputTTFT, 0, len(t.bins))
	for _, b := range slices.Sorted(maps.Keys(t.bins)) {
		out = append(out, InputTTFT{MidTokens: inputTTFTBinMid(b), TTFT: t.bins[b].Stats()})
	}
	return out
}

// inputTTFTBin is the bin of a prompt of n tokens (n ≥ 1).
func inputTTFTBin(n int) int {
	return int(math.Floor(math.Log2(float64(n)) * InputTTFTBinsPerDoubling))
}

// inputTTFTBinMid is the geometric middle of bin b, in tokens.
func inputTTFTBinMid(b int) float64 {
	return math.Pow(2, (float64(b)+0.5)/InputTTFTBinsPerDoubling)
}
