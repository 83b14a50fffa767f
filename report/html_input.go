package report

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/inferload/inferload/record"
)

// inputBinsPerDoubling sets the width of an input-length bin of the TTFT
// against input length chart: four to a doubling (~19% wide), so 100 to
// 100 000 tokens fits in 40 points.
const inputBinsPerDoubling = 4

// inputBin is the input-length bin of a prompt of n tokens (n ≥ 1).
func inputBin(n int) int {
	return int(math.Floor(math.Log2(float64(n)) * inputBinsPerDoubling))
}

// inputBinMid is the geometric middle of bin b, in tokens.
func inputBinMid(b int) float64 {
	return math.Pow(2, (float64(b)+0.5)/inputBinsPerDoubling)
}

// addInput counts a streamed success's TTFT in its input-length bin. The
// length is the server's usage count, else the client's own estimate.
func (d *Digest) addInput(r *record.Result) {
	n := r.InputTokens
	if n <= 0 {
		n = r.PromptTokensSent
	}
	if n <= 0 {
		return
	}
	if d.inputTTFT == nil {
		d.inputTTFT = map[int]*[latencyBins]int64{}
	}
	b := inputBin(n)
	h := d.inputTTFT[b]
	if h == nil {
		h = new([latencyBins]int64)
		d.inputTTFT[b] = h
	}
	h[binOf(r.TTFTUS)]++
}

// inputSection draws TTFT against input length: prefill grows with the
// prompt, so the slope says what a longer prompt costs.
func inputSection(in *HTMLInput) *section {
	d := in.Digest
	if d == nil || len(d.inputTTFT) < 2 {
		return nil
	}
	bins := slices.Sorted(maps.Keys(d.inputTTFT))
	c := chart{ID: "input-ttft", Kind: "curve", Title: "TTFT against input length", XLabel: "input tokens (log scale)",
		LogX: true, YLabel: "ms", Y2Label: "requests"}
	var p50, p99, n []*float64
	for _, b := range bins {
		h := d.inputTTFT[b]
		c.X = append(c.X, inputBinMid(b))
		p50 = append(p50, ptr(histQuantile(h, 0.50)))
		p99 = append(p99, ptr(histQuantile(h, 0.99)))
		n = append(n, ptr(float64(histCount(h))))
	}
	c.Series = []line{{Label: "TTFT p50", Values: p50, Color: "#72b7b2"},
		{Label: "TTFT p99", Values: p99, Color: "#4c78a8"},
		{Label: "requests", Values: n, Right: true, Color: "#bab0ac"}}
	return &section{ID: "input-length", Title: "TTFT against input length", Charts: []chart{c},
		Help: fmt.Sprintf("Streamed successes binned by prompt length (%d bins to a doubling; usage counts, else the client's estimate). TTFT rising with the prompt is prefill cost; a flat line with a high P99 is queueing, not prefill.", inputBinsPerDoubling)}
}

// histCount is the number of samples in a latency histogram.
func histCount(h *[latencyBins]int64) int64 {
	var n int64
	for _, c := range h {
		n += c
	}
	return n
}

// histQuantile is the q-quantile of a latency histogram in ms, at the
// geometric middle of the bin that holds it (bins are ~26% wide).
func histQuantile(h *[latencyBins]int64, q float64) float64 {
	rank := int64(math.Ceil(q * float64(histCount(h))))
	var seen int64
	for b, c := range h {
		seen += c
		if c > 0 && seen >= rank {
			return math.Sqrt(binEdgeMS(b) * binEdgeMS(b+1))
		}
	}
	return 0
}
