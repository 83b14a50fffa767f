package analyze

// This file: the drift of a latency's quantiles over a soak, each in
// windows large enough to back it, and what to do when the soak is too
// short for one.

import (
	"fmt"
	"math"
	"time"
)

// DriftQuantile is a latency quantile a soak tests for drift.
type DriftQuantile struct {
	Name string // "P99", as verdicts print it
	Q    float64
}

// DriftQuantiles are the quantiles a soak tests for each latency: a
// planted delay moves the median long before it moves the tail, and the
// tail needs 60 times the samples (MinSamples: 5 for P50, 299 for P99).
var DriftQuantiles = []DriftQuantile{{"P50", 0.50}, {"P90", 0.90}, {"P99", 0.99}}

// DriftNeed is how many values each window of quantile q must hold to
// back it: MinSamples at DefaultConfidence, the rule every reported
// percentile is backed by.
func DriftNeed(q float64) int { return MinSamples(q, DefaultConfidence) }

// QuantileWindows is one quantile of one latency over a soak, in windows
// each holding at least DriftNeed(Q) values: runs of the soak's base
// windows (--window), each closed at the first base window that brings
// its count to DriftNeed(Q). A trailing run that never reaches it is left
// out.
type QuantileWindows struct {
	DriftQuantile
	// Times are each window's midpoint in seconds from the soak's start
	// and Values its quantile.
	Times, Values []float64
	// MinN is the fewest values a window holds.
	MinN int64
	// Samples is how many values the whole measured span held.
	Samples int64
}

// QuantileDriftVerdict is a quantile's DriftVerdict with the sample
// sizes that sized its windows.
type QuantileDriftVerdict struct {
	DriftVerdict
	// Need is DriftNeed(Q); MinN the fewest values a tested window held.
	Need int
	MinN int64
}

// QuantileDrift tests each quantile of one latency for drift over span.
// A quantile whose backed windows number fewer than MinTrendWindows is
// not tested, and its verdict says how long a soak at this rate would
// test it. The tested quantiles share o.Alpha (Bonferroni: each at Alpha
// / their number), so the chance that a latency that did not move is
// flagged at any quantile stays under Alpha.
func QuantileDrift(metric string, qs []QuantileWindows, span, base time.Duration, o DriftOptions) []QuantileDriftVerdict {
	o.Tests = 0
	for _, q := range qs {
		if len(q.Values) >= MinTrendWindows {
			o.Tests++
		}
	}
	out := make([]QuantileDriftVerdict, 0, len(qs))
	for _, q := range qs {
		v := QuantileDriftVerdict{Need: DriftNeed(q.Q)}
		name := q.Name + " " + metric
		if len(q.Values) < MinTrendWindows {
			v.DriftVerdict = DriftVerdict{Metric: name, P: 1, Windows: len(q.Values),
				Verdict: untestedWords(name, q, span, base)}
		} else {
			v.DriftVerdict, v.MinN = DriftAt(name, q.Times, q.Values, span, o), q.MinN
		}
		out = append(out, v)
	}
	return out
}

// untestedWords says why a quantile was not tested and how long a soak
// at the same rate would test it: windows of k base windows, k the
// fewest that hold DriftNeed(Q) values at the soak's mean rate, and
// MinTrendWindows of them. "P99 TTFT drift not tested: 780 values over
// 1m30s fill 2 windows of at least 299 (P99 needs 299 a window, a trend
// 5 windows); at this rate a soak of at least 3m45s would test it".
func untestedWords(name string, q QuantileWindows, span, base time.Duration) string {
	need := DriftNeed(q.Q)
	head := fmt.Sprintf("%s drift not tested: %d values over %s fill %d windows of at least %d (%s needs %d a window at %.0f%% confidence, a trend %d windows)",
		name, q.Samples, span, len(q.Values), need, q.Name, need, DefaultConfidence*100, MinTrendWindows)
	if q.Samples == 0 || span <= 0 || base <= 0 {
		return head
	}
	perBase := float64(q.Samples) / span.Seconds() * base.Seconds()
	k := math.Ceil(float64(need) / perBase)
	soak := time.Duration(k * MinTrendWindows * float64(base)).Round(time.Second)
	return fmt.Sprintf("%s; at this rate a soak of at least %s would test it", head, soak)
}
