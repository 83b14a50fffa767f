package record

import (
	"math"
	"math/big"
	"math/bits"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: every latency we record lies between 1 µs and 1 h, kept to
// 3 significant digits (DESIGN.md's measurement contract). Values are
// microseconds.
const (
	histLowestUS  = 1
	histHighestUS = int64(3600 * 1e6)
	histDigits    = 3
)

// Hist is a latency histogram in microseconds: an HDR histogram for the
// percentiles plus exact count, sum, sum of squares, min and max, so the
// mean, standard deviation and extremes carry no bucket error. Everything it
// holds merges exactly and does not depend on the order values arrived in,
// which is why a summary rebuilt from records.jsonl matches the live one
// even when the records were written in a different order.
//
// Values outside [0, 1 h] are clamped to the nearest bound and counted
// (Clamped): a bad record never makes Record fail or panic.
//
// The zero value is not usable; use NewHist. A Hist is not safe for
// concurrent use.
type Hist struct {
	h       *hdr.Histogram
	count   int64
	sum     uint64
	sumSqHi uint64 // sum of squares as a 128-bit integer: exact, mergeable
	sumSqLo uint64
	min     int64
	max     int64
	clamped int64
}

// NewHist returns an empty histogram for 1 µs – 1 h at 3 significant digits.
func NewHist() *Hist { return newHist(histDigits) }

// newHist lets per-second windows use a coarser, much smaller histogram.
func newHist(digits int) *Hist {
	return &Hist{h: hdr.New(histLowestUS, histHighestUS, digits)}
}

// Record adds one value in microseconds. Negative values are recorded as 0
// and values above 1 h as 1 h; both are counted in Clamped.
func (h *Hist) Record(us int64) {
	if us < 0 {
		us = 0
		h.clamped++
	} else if us > histHighestUS {
		us = histHighestUS
		h.clamped++
	}
	// Cannot fail: us is within the histogram's range.
	_ = h.h.RecordValue(us)
	if h.count == 0 || us < h.min {
		h.min = us
	}
	if us > h.max {
		h.max = us
	}
	h.count++
	h.sum += uint64(us)
	hi, lo := bits.Mul64(uint64(us), uint64(us))
	h.addSumSq(hi, lo)
}

// RecordN adds n copies of one value in microseconds, as n calls of Record
// would (a capped stream's tail gaps arrive as value × count).
func (h *Hist) RecordN(us, n int64) {
	if n <= 0 {
		return
	}
	if us < 0 {
		us = 0
		h.clamped += n
	} else if us > histHighestUS {
		us = histHighestUS
		h.clamped += n
	}
	_ = h.h.RecordValues(us, n) // cannot fail: us is within range
	if h.count == 0 || us < h.min {
		h.min = us
	}
	h.max = max(h.max, us)
	h.count += n
	h.sum += uint64(us) * uint64(n)
	// us² × n as a 128-bit product: (hi·2⁶⁴ + lo) × n.
	hi, lo := bits.Mul64(uint64(us), uint64(us))
	carry, low := bits.Mul64(lo, uint64(n))
	h.addSumSq(hi*uint64(n)+carry, low)
}

func (h *Hist) addSumSq(hi, lo uint64) {
	var carry uint64
	h.sumSqLo, carry = bits.Add64(h.sumSqLo, lo, 0)
	h.sumSqHi, _ = bits.Add64(h.sumSqHi, hi, carry)
}

// Merge adds every value recorded in o to h. Percentiles are never averaged
// across histograms: they are recomputed from the merged counts.
func (h *Hist) Merge(o *Hist) {
	if o.count == 0 {
		h.clamped += o.clamped
		return
	}
	h.h.Merge(o.h)
	if h.count == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.count += o.count
	h.sum += o.sum
	h.addSumSq(o.sumSqHi, o.sumSqLo)
	h.clamped += o.clamped
}

// Reset empties h, keeping its memory.
func (h *Hist) Reset() {
	h.h.Reset()
	*h = Hist{h: h.h}
}

// Count is the number of values recorded.
func (h *Hist) Count() int64 { return h.count }

// Clamped is the number of values that were outside [0, 1 h] and clamped.
func (h *Hist) Clamped() int64 { return h.clamped }

// QuantileUS returns the value at quantile q (0..1) in microseconds, 0 when
// empty. HDR reports the highest value equivalent to the bucket; it is
// clamped into [min, max] so a percentile never exceeds the exact maximum.
func (h *Hist) QuantileUS(q float64) int64 {
	if h.count == 0 {
		return 0
	}
	return h.clampToRange(h.h.ValueAtQuantile(q * 100))
}

func (h *Hist) clampToRange(v int64) int64 {
	return min(max(v, h.min), h.max)
}

// Stats summarises a histogram in milliseconds: what summary.json holds for
// each metric. All fields are 0 when Count is 0.
type Stats struct {
	Count  int64   `json:"count"`
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
	Min    float64 `json:"min"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p999"`
	Max    float64 `json:"max"`
}

// Percentile is one of the percentiles reports show, with its name there.
type Percentile struct {
	Name string
	// Q is the quantile, 0.99 for p99.
	Q float64
}

// Percentiles are the reported percentiles, lowest first and in Stats'
// field order: the one list that summaries, verdicts (analyze) and SLO
// objectives ("ttft.p99<=2s") name.
var Percentiles = []Percentile{{"p50", 0.50}, {"p90", 0.90}, {"p95", 0.95}, {"p99", 0.99}, {"p999", 0.999}}

// Shifted is s with every figure of position moved by d (ms) and held at
// 0 or more; the spread (Stddev) and Count are unchanged. A constant
// subtracted from every sample moves its percentiles by that constant.
func (s Stats) Shifted(d float64) Stats {
	at := func(v float64) float64 { return max(v+d, 0) }
	s.Mean, s.Min, s.P50, s.P90, s.P95, s.P99, s.P999, s.Max = at(s.Mean), at(s.Min), at(s.P50), at(s.P90), at(s.P95), at(s.P99), at(s.P999), at(s.Max)
	return s
}

// At is the figure of the reported percentile named name ("p99"); ok is
// false for a name not in Percentiles.
func (s Stats) At(name string) (v float64, ok bool) {
	switch name {
	case "p50":
		return s.P50, true
	case "p90":
		return s.P90, true
	case "p95":
		return s.P95, true
	case "p99":
		return s.P99, true
	case "p999":
		return s.P999, true
	}
	return 0, false
}

// PercentileQ returns the quantile of a reported percentile's name.
func PercentileQ(name string) (float64, bool) {
	for _, p := range Percentiles {
		if p.Name == name {
			return p.Q, true
		}
	}
	return 0, false
}

// statsPercentiles are Percentiles as HDR percentiles (0.999 → 99.9,
// rounded so the float is the literal's), in Stats' field order.
var statsPercentiles = func() []float64 {
	out := make([]float64, len(Percentiles))
	for i, p := range Percentiles {
		out[i] = math.Round(p.Q*1000) / 10
	}
	return out
}()

// Stats computes the summary figures. Mean and Stddev (population) are exact
// to the microsecond inputs, rounded to the nanosecond; Min and Max are
// exact; percentiles come from the HDR buckets (3 significant digits).
func (h *Hist) Stats() Stats {
	if h.count == 0 {
		return Stats{}
	}
	p := h.h.ValueAtPercentilesSlice(statsPercentiles)
	return Stats{
		Count:  h.count,
		Mean:   roundNS(float64(h.sum) / float64(h.count) / 1e3),
		Stddev: roundNS(h.stddevUS() / 1e3),
		Min:    usToMS(h.min),
		P50:    usToMS(h.clampToRange(p[0])),
		P90:    usToMS(h.clampToRange(p[1])),
		P95:    usToMS(h.clampToRange(p[2])),
		P99:    usToMS(h.clampToRange(p[3])),
		P999:   usToMS(h.clampToRange(p[4])),
		Max:    usToMS(h.max),
	}
}

// stddevUS is sqrt((n·Σx² − (Σx)²) / n²), computed in exact integers so the
// result does not depend on the order values were recorded or merged in.
func (h *Hist) stddevUS() float64 {
	n := new(big.Int).SetInt64(h.count)
	sumSq := new(big.Int).SetUint64(h.sumSqHi)
	sumSq.Lsh(sumSq, 64).Or(sumSq, new(big.Int).SetUint64(h.sumSqLo))
	sum := new(big.Int).SetUint64(h.sum)
	num := new(big.Int).Mul(n, sumSq)
	num.Sub(num, sum.Mul(sum, sum))
	if num.Sign() <= 0 {
		return 0
	}
	v, _ := new(big.Float).Quo(new(big.Float).SetInt(num), new(big.Float).SetInt(n.Mul(n, n))).Float64()
	return math.Sqrt(v)
}

func usToMS(us int64) float64 { return float64(us) / 1e3 }

// roundNS rounds milliseconds to whole nanoseconds, keeping summary.json free
// of meaningless digits.
func roundNS(ms float64) float64 { return math.Round(ms*1e6) / 1e6 }
