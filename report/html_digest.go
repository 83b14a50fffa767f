package report

import (
	"math"

	"github.com/inferload/inferload/record"
)

// Latency bins shared by every distribution and heat map: log-spaced from
// 100 µs to about 1 h, binsPerDecade to a decade, so a bin is ~26% wide:
// fine enough to see two modes, coarse enough that a 10 M-request run
// still draws in a blink.
const (
	binsPerDecade = 10
	minBinUS      = 100
	latencyBins   = 76 // 100 µs · 10^(76/10) ≈ 4 000 s
	// maxColumns bounds a heat map's time columns: past it, columns double
	// in width and merge pairwise, so memory and the page stay small
	// however long the run.
	maxColumns = 480
)

// binOf is the latency bin holding us microseconds, clamped to the range.
func binOf(us int64) int {
	if us < minBinUS {
		return 0
	}
	b := int(math.Floor(math.Log10(float64(us)/minBinUS) * binsPerDecade))
	return min(max(b, 0), latencyBins-1)
}

// binEdgeMS is the lower edge of bin b in milliseconds.
func binEdgeMS(b int) float64 {
	return minBinUS * math.Pow(10, float64(b)/binsPerDecade) / 1000
}

// Digest folds records into what the HTML report draws from them:
// distributions of TTFT, ITL and E2E, and heat maps of latency over time,
// in display bins; and, from record, TTFT by input length and the output
// tokens delivered over time. Its size is bounded whatever the number of
// records; Add is not safe for concurrent use.
//
// It computes no figure of its own: which records count is record's rule
// (Result.MeasuredSuccess, TTFTUS, EachGap, the throughput rule), as in
// the summary, so a distribution holds as many samples as summary.json's
// metric, and every number the page prints comes from record.
type Digest struct {
	ttft, itl, e2e [latencyBins]int64
	ttftHeat       heat
	e2eHeat        heat
	// inputTTFT is TTFT by input-length bin (html_input.go).
	inputTTFT record.TTFTByInput
	// output is the output tokens delivered over time, warm-up included.
	output record.OutputFlow
}

// NewDigest returns an empty digest.
func NewDigest() *Digest {
	return &Digest{ttftHeat: heat{widthS: 1}, e2eHeat: heat{widthS: 1}}
}

// Add folds one record in.
func (d *Digest) Add(r *record.Result) {
	d.output.Add(r)
	d.inputTTFT.Add(r)
	if !r.MeasuredSuccess() {
		return
	}
	sec := max(r.DoneUS(), 0) / 1e6
	d.e2e[binOf(r.E2EUS)]++
	d.e2eHeat.add(sec, binOf(r.E2EUS))
	r.EachGap(func(gapUS, n int64) { d.itl[binOf(gapUS)] += n })
	ttft, ok := record.TTFTUS(r)
	if !ok {
		return
	}
	d.ttft[binOf(ttft)]++
	d.ttftHeat.add(sec, binOf(ttft))
}

// heat counts requests per (time column, latency bin).
type heat struct {
	widthS int64 // seconds per column, a power of two
	cols   [][latencyBins]int64
}

func (h *heat) add(sec int64, bin int) {
	col := sec / h.widthS
	for col >= maxColumns {
		h.coarsen()
		col = sec / h.widthS
	}
	for int64(len(h.cols)) <= col {
		h.cols = append(h.cols, [latencyBins]int64{})
	}
	h.cols[col][bin]++
}

// coarsen doubles the column width, merging columns pairwise.
func (h *heat) coarsen() {
	merged := make([][latencyBins]int64, (len(h.cols)+1)/2)
	for i, c := range h.cols {
		for b, n := range c {
			merged[i/2][b] += n
		}
	}
	h.cols, h.widthS = merged, h.widthS*2
}

// empty reports whether nothing was counted.
func (h *heat) empty() bool { return len(h.cols) == 0 }
