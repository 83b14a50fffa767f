package analyze

// This file: the "on the edge" part of the capacity rule. CheckSLO's
// binomial rule is a one-sided Clopper–Pearson bound on the share of
// requests over an SLO's bound: "TTFT p90 ≤ X" holds when that share is
// shown to be at most 1 − 0.90. It treats requests as independent, and
// under load they are not: with U closed-loop users on S slots, whether a
// request waits a whole service for a slot depends on how the users lie
// in phase, which lasts many requests. When (U − S) ÷ U is near the
// SLO's tail share (9 users on 8 slots: 11% wait, against 10% allowed),
// the exceeding requests come in runs, one probe sees a few runs, and the
// share it saw says less than its raw count claims: llama.cpp on 8 slots
// passed 9 users in a probe and failed 10 of 10 reruns there (TRUTH.md,
// "Knee and capacity on real engines").
//
// So the share is judged on an effective sample size: the probe's
// requests, in the order they finished, cut into exceedanceBatches (8)
// contiguous batches (the batch means compare uses); the spread of the
// batches' shares against the spread independent requests would give is
// the design effect d (the variance inflation), floored at 1 so the rule
// is never looser than for independent requests. The binomial rule is
// then applied to n ÷ d requests with x ÷ d over the bound (n rounded
// down, x up). With d = 1 it is the old rule, count for count.

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Exceedance is the share of a probe's requests over an SLO's bound,
// counted for its serial correlation.
type Exceedance struct {
	// N and Exceed are the raw counts.
	N, Exceed int
	// DesignEffect is the variance inflation of the share from serial
	// correlation (≥ 1; 1 when the order is unknown or too short to
	// tell).
	DesignEffect float64
	// EffectiveN and EffectiveExceed are the counts the binomial rule
	// judges: N ÷ DesignEffect rounded down, Exceed ÷ DesignEffect
	// rounded up.
	EffectiveN, EffectiveExceed int
}

// exceedanceBatches is how many contiguous batches the design effect
// cuts a probe into: compare's DefaultBatches.
const exceedanceBatches = DefaultBatches

// minBatchesFlags is the fewest flags the design effect is estimated
// from: two per batch.
const minBatchesFlags = 2 * exceedanceBatches

// ExceedanceOf counts tally t with its design effect from t's flags in
// record order (Tally.at, kept by CountSLOsInOrder). A tally without flags (or
// whose flags disagree with its counts) has design effect 1.
func ExceedanceOf(t Tally) Exceedance {
	e := Exceedance{N: t.N, Exceed: t.Exceed, DesignEffect: 1, EffectiveN: t.N, EffectiveExceed: t.Exceed}
	if len(t.at) != t.N || t.N < minBatchesFlags {
		return e
	}
	e.DesignEffect = designEffect(t.at)
	e.EffectiveN = int(math.Floor(float64(t.N)/e.DesignEffect + 1e-9))
	e.EffectiveExceed = min(int(math.Ceil(float64(t.Exceed)/e.DesignEffect-1e-9)), e.EffectiveN)
	return e
}

// designEffect is the batch-means variance inflation of the share of set
// flags: the variance of exceedanceBatches contiguous batches' shares, times
// the mean batch size, over p(1 − p); at least 1. Independent flags give
// about 1 (the batch variance is p(1 − p) ÷ m); flags set in runs longer
// than a few requests give more.
func designEffect(at []bool) float64 {
	p := shareTrue(at)
	if p == 0 || p == 1 {
		return 1 // no spread to inflate: every batch agrees
	}
	shares := make([]float64, exceedanceBatches)
	for i := range shares {
		shares[i] = shareTrue(cut(at, float64(i)/exceedanceBatches, float64(i+1)/exceedanceBatches))
	}
	m := float64(len(at)) / exceedanceBatches
	return max(1, variance(shares)*m/(p*(1-p)))
}

// UpperShare is the one-sided Clopper–Pearson upper bound on the share
// over the bound at the confidence, from the effective counts: the share
// the rule compares with 1 − q (it holds iff UpperShare ≤ 1 − q, up to
// the rounding of the counts).
func (e Exceedance) UpperShare(confidence float64) float64 {
	if e.EffectiveExceed >= e.EffectiveN {
		return 1
	}
	b := distuv.Beta{Alpha: float64(e.EffectiveExceed + 1), Beta: float64(e.EffectiveN - e.EffectiveExceed)}
	return b.Quantile(confidence)
}

// Holds is the binomial rule (SLOHolds) on the effective counts.
func (e Exceedance) Holds(q, confidence float64) bool {
	return SLOHolds(e.EffectiveN, e.EffectiveExceed, q, confidence)
}

// OnEdge reports a load on the cliff: the probe's own percentile is
// within the bound (at most 1 − q of its requests over it), yet the rule
// cannot show it holds. The search treats it as a miss.
func (e Exceedance) OnEdge(q, confidence float64) bool {
	return float64(e.Exceed) <= (1-q)*float64(e.N) && !e.Holds(q, confidence)
}

// edgeReason says why a load on the edge is not met, with the share seen
// and the bound on it: "TTFT p90 ≤ 60ms on the edge: the probe's p90 is
// within the bound, but 9.0% of requests (12 of 134) exceed it and up to
// 19% may (95% upper bound, 41 effective samples): not met".
func (e Exceedance) edgeReason(name, pc string, confidence float64) string {
	return fmt.Sprintf("%s on the edge: the probe's %s is within the bound, but %.1f%% of requests (%d of %d) exceed it and up to %.0f%% may (%.0f%% upper bound, %d effective samples%s): not met",
		name, pc, 100*float64(e.Exceed)/float64(e.N), e.Exceed, e.N, 100*e.UpperShare(confidence), confidence*100, e.EffectiveN, e.correlated())
}

// correlated is ", serially correlated ×d" when the design effect
// shrank the sample, else "".
func (e Exceedance) correlated() string {
	if e.DesignEffect <= 1 {
		return ""
	}
	return fmt.Sprintf(", serially correlated ×%.1f", e.DesignEffect)
}

// allowed is how many of the effective samples may exceed the bound at
// the confidence (0 when too few to show the percentile at all).
func (e Exceedance) allowed(q, confidence float64) int {
	k, ok := UpperBoundRank(e.EffectiveN, q, confidence)
	if !ok {
		return 0
	}
	return e.EffectiveN - k
}

// effective is " (x of n effective, serially correlated ×d)" when the
// design effect shrank the counts, else "": the reasons of independent
// requests read as before.
func (e Exceedance) effective() string {
	if e.DesignEffect <= 1 {
		return ""
	}
	return fmt.Sprintf(" (%d of %d effective%s)", e.EffectiveExceed, e.EffectiveN, e.correlated())
}
