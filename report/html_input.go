package report

import (
	"fmt"

	"github.com/inferload/inferload/record"
)

// inputSection draws TTFT against input length: prefill grows with the
// prompt, so the slope says what a longer prompt costs. The percentiles
// are record's (TTFTByInput): each bin's own histogram, at the precision
// of summary.json's.
func inputSection(in *HTMLInput) *section {
	if in.Digest == nil {
		return nil
	}
	bins := in.Digest.inputTTFT.Bins()
	if len(bins) < 2 {
		return nil
	}
	c := chart{ID: "input-ttft", Kind: "curve", Title: "TTFT against input length", XLabel: "input tokens (log scale)",
		LogX: true, YLabel: "ms", Y2Label: "requests"}
	var p50, p99, n []*float64
	for _, b := range bins {
		c.X = append(c.X, b.MidTokens)
		p50 = append(p50, ptr(b.TTFT.P50))
		p99 = append(p99, ptr(b.TTFT.P99))
		n = append(n, ptr(float64(b.TTFT.Count)))
	}
	c.Series = []line{{Label: "TTFT p50", Values: p50, Color: "#72b7b2"},
		{Label: "TTFT p99", Values: p99, Color: "#4c78a8"},
		{Label: "requests", Values: n, Right: true, Color: "#bab0ac"}}
	return &section{ID: "input-length", Title: "TTFT against input length", Charts: []chart{c},
		Help: fmt.Sprintf("Measured streamed successes binned by prompt length (%d bins to a doubling; usage counts, else the client's estimate), with each bin's TTFT percentiles computed as summary.json's. TTFT rising with the prompt is prefill cost; a flat line with a high P99 is queueing, not prefill.", record.InputTTFTBinsPerDoubling)}
}
