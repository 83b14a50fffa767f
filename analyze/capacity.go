package analyze

import (
	"cmp"
	"fmt"
	"math"

	"github.com/inferload/inferload/record"
)

// Tally counts one probe's samples of an SLO's metric and how many of them
// exceeded its bound (failed requests count as exceeding: they did not
// meet the objective).
type Tally struct {
	N, Exceed int
}

// SLOVerdict is whether a probe met one SLO, and why in words.
type SLOVerdict struct {
	Met bool
	// Conclusive is false when the probe had too few samples to claim the
	// percentile at all: it is then not met, and the reason says how many
	// were needed.
	Conclusive bool
	Reason     string
}

// CheckSLO applies the binomial rule (SLOHolds) to one capacity
// objective's tally: at least b.Share of requests must meet its bounds.
func CheckSLO(b record.SLO, t Tally, confidence float64) SLOVerdict {
	need := MinSamples(b.Share, confidence)
	if t.N < need {
		return SLOVerdict{Reason: fmt.Sprintf("%s: %d samples cannot show a %s at %.0f%% confidence (%d needed): lengthen the probe",
			b, t.N, b.Percentile(), confidence*100, need)}
	}
	k, _ := UpperBoundRank(t.N, b.Share, confidence)
	allowed := t.N - k
	if t.Exceed <= allowed {
		return SLOVerdict{Met: true, Conclusive: true, Reason: fmt.Sprintf("%s holds: %d of %d samples above the bound, at most %d allowed at %.0f%% confidence",
			b, t.Exceed, t.N, allowed, confidence*100)}
	}
	return SLOVerdict{Conclusive: true, Reason: fmt.Sprintf("%s missed: %d of %d samples above the bound, at most %d allowed at %.0f%% confidence",
		b, t.Exceed, t.N, allowed, confidence*100)}
}

// SearchOptions bound a capacity search.
type SearchOptions struct {
	// Low and High are the lowest and highest loads to probe.
	Low, High float64
	// Whole restricts loads to whole numbers (users).
	Whole bool
	// Precision ends the search once the highest passing and lowest
	// failing loads are within this fraction (default 0.10); with Whole
	// it also ends when they are adjacent.
	Precision float64
	// MaxProbes ends the search after this many probes (default 10).
	MaxProbes int
}

// DefaultSearch holds each SearchOptions default (Precision and
// MaxProbes), for the zero fields and for find-capacity's flags.
var DefaultSearch = SearchOptions{Precision: 0.10, MaxProbes: 10}

func (o SearchOptions) withDefaults() SearchOptions {
	o.Precision = cmp.Or(o.Precision, DefaultSearch.Precision)
	o.MaxProbes = cmp.Or(o.MaxProbes, DefaultSearch.MaxProbes)
	return o
}

// NextLoad is the next load a capacity search should probe, given the
// loads that passed and failed so far, or done when the answer is known:
// the highest passing load below every failing one (0 when even Low
// failed). The search doubles from Low until a probe fails or High is
// reached, then bisects between the best pass and the lowest fail.
func NextLoad(passed, failed []float64, o SearchOptions) (next float64, done bool) {
	o = o.withDefaults()
	if len(passed)+len(failed) >= o.MaxProbes {
		return 0, true
	}
	lo, hi := bracket(passed, failed)
	switch {
	case len(passed)+len(failed) == 0:
		return o.Low, false
	case math.IsInf(hi, 1): // nothing failed yet: climb
		if lo >= o.High {
			return 0, true
		}
		return o.round(math.Min(lo*2, o.High)), false
	case lo == 0: // the lowest probe failed
		return 0, true
	}
	if hi/lo <= 1+o.Precision || (o.Whole && hi-lo <= 1) {
		return 0, true
	}
	mid := o.round((lo + hi) / 2)
	if mid <= lo || mid >= hi {
		return 0, true
	}
	return mid, false
}

// Capacity is the answer of a finished search: the highest load that
// passed below every failing one.
func Capacity(passed, failed []float64) float64 {
	lo, _ := bracket(passed, failed)
	return lo
}

// bracket is the highest pass below the lowest fail, and that fail (+Inf
// when none failed).
func bracket(passed, failed []float64) (lo, hi float64) {
	hi = math.Inf(1)
	for _, f := range failed {
		hi = math.Min(hi, f)
	}
	for _, p := range passed {
		if p < hi {
			lo = math.Max(lo, p)
		}
	}
	return lo, hi
}

func (o SearchOptions) round(v float64) float64 {
	if o.Whole {
		return math.Floor(v)
	}
	return math.Round(v*1000) / 1000
}
