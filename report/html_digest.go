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
// distributions of TTFT, ITL and E2E, and heat maps of latency over time.
// Its size is bounded whatever the number of records; Add is not safe for
// concurrent use. Warm-up requests and failures are left out, as in the
// summary's latency figures.
type Digest struct {
	ttft, itl, e2e [latencyBins]int64
	ttftHeat       heat
	e2eHeat        heat
	// inputTTFT is TTFT by input-length bin (html_input.go).
	inputTTFT map[int]*[latencyBins]int64
	// output is the output tokens delivered over time, warm-up included.
	output  tokenFlow
	records int64
}

// NewDigest returns an empty digest.
func NewDigest() *Digest {
	return &Digest{ttftHeat: heat{widthS: 1}, e2eHeat: heat{widthS: 1}, output: tokenFlow{widthS: 1}}
}

// Add folds one record in.
func (d *Digest) Add(r *record.Result) {
	d.records++
	if r.OK() {
		d.output.addResult(r)
	}
	if r.Warmup || !r.OK() {
		return
	}
	sec := max(r.DoneUS(), 0) / 1e6
	d.e2e[binOf(r.E2EUS)]++
	d.e2eHeat.add(sec, binOf(r.E2EUS))
	if !r.Stream || r.TTFTUS <= 0 {
		return
	}
	d.ttft[binOf(r.TTFTUS)]++
	d.ttftHeat.add(sec, binOf(r.TTFTUS))
	d.addInput(r)
	r.EachGap(func(gapUS, n int64) { d.itl[binOf(gapUS)] += n })
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

// maxFlowColumns bounds tokenFlow's columns, as maxColumns does a heat
// map's: a day-long run keeps 32-second columns.
const maxFlowColumns = 4096

// tokenFlow is the output tokens delivered per column of the run clock,
// counted as the summary's throughput counts them: spread evenly over the
// stream's content events, at the instant each arrived (a reply without
// events delivers all at its end). A long reply's tokens thus land in the
// seconds they streamed in, not in the second it completed.
type tokenFlow struct {
	widthS int64 // seconds per column, a power of two
	cols   []float64
}

func (f *tokenFlow) addResult(r *record.Result) {
	if len(r.EventsUS) == 0 || r.OutputTokens == 0 {
		f.add(r.DoneUS(), float64(r.OutputTokens))
		return
	}
	per := float64(r.OutputTokens) / float64(r.ContentEvents())
	for _, off := range r.EventsUS {
		f.add(r.SendUS+off, per)
	}
	if tl := r.EventsTail; tl != nil && tl.Dropped > 0 {
		// As the summary's throughput: the dropped events' tokens spread
		// evenly from the last kept event to the last event, per second.
		from, to := r.SendUS+r.EventsUS[len(r.EventsUS)-1], r.SendUS+tl.LastUS
		total := per * float64(tl.Dropped)
		if to <= from {
			f.add(from, total)
			return
		}
		for us := from; us < to; {
			next := min((us/1e6+1)*1e6, to)
			f.add(us, total*float64(next-us)/float64(to-from))
			us = next
		}
	}
}

func (f *tokenFlow) add(us int64, v float64) {
	sec := max(us, 0) / 1e6
	col := sec / f.widthS
	for col >= maxFlowColumns {
		merged := make([]float64, (len(f.cols)+1)/2)
		for i, c := range f.cols {
			merged[i/2] += c
		}
		f.cols, f.widthS = merged, f.widthS*2
		col = sec / f.widthS
	}
	for int64(len(f.cols)) <= col {
		f.cols = append(f.cols, 0)
	}
	f.cols[col] += v
}

// perSecond is the tokens delivered in [fromS, toS) per second, a column
// that straddles an edge prorated by its overlap.
func (f *tokenFlow) perSecond(fromS, toS float64) float64 {
	if toS <= fromS {
		return 0
	}
	w := float64(f.widthS)
	var sum float64
	for i := max(int(fromS/w), 0); i < len(f.cols) && float64(i)*w < toS; i++ {
		start := float64(i) * w
		if overlap := min(start+w, toS) - max(start, fromS); overlap > 0 {
			sum += f.cols[i] * overlap / w
		}
	}
	return sum / (toS - fromS)
}
