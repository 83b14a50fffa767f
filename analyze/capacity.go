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
	// at flags, in the order CountSLOs saw the records (their completion
	// order), which ones exceeded: the serial correlation ExceedanceOf
	// reads. A tally built from counts alone has none.
	at []bool
}

// SLOVerdict is whether a probe met one SLO, and why in words.
type SLOVerdict struct {
	Met bool
	// Conclusive is false when the probe had too few samples to claim the
	// percentile at all: it is then not met, and the reason says how many
	// were needed.
	Conclusive bool
	// OnEdge: the probe's own percentile was within the bound but the
	// share over it was not shown small enough (Exceedance.OnEdge); not
	// met, and conclusive.
	OnEdge bool
	Reason string
}

// CheckSLO applies the binomial rule (SLOHolds) to one capacity
// objective's tally, on its effective sample size (ExceedanceOf): at
// least b.Share of requests must meet its bounds.
func CheckSLO(b record.SLO, t Tally, confidence float64) SLOVerdict {
	need := MinSamples(b.Share, confidence)
	if t.N < need {
		return SLOVerdict{Reason: fmt.Sprintf("%s: %d samples cannot show a %s at %.0f%% confidence (%d needed): lengthen the probe",
			b, t.N, b.Percentile(), confidence*100, need)}
	}
	e := ExceedanceOf(t)
	switch {
	case e.Holds(b.Share, confidence):
		return SLOVerdict{Met: true, Conclusive: true, Reason: fmt.Sprintf("%s holds: %d of %d samples above the bound%s, at most %d allowed at %.0f%% confidence",
			b, t.Exceed, t.N, e.effective(), e.allowed(b.Share, confidence), confidence*100)}
	case e.OnEdge(b.Share, confidence):
		return SLOVerdict{Conclusive: true, OnEdge: true, Reason: e.edgeReason(b.String(), b.Percentile(), confidence)}
	}
	return SLOVerdict{Conclusive: true, Reason: fmt.Sprintf("%s missed: %d of %d samples above the bound%s, at most %d allowed at %.0f%% confidence",
		b, t.Exceed, t.N, e.effective(), e.allowed(b.Share, confidence), confidence*100)}
}

// CountSLOs counts one measured record toward each SLO as goodput judges it
// (record.SLO.Judge): a failed request counts as exceeding every bound; a
// success no bound of the SLO applies to (no TPOT) is left out; a warm-up
// record is not counted. The tallies keep counts only, so CheckSLO judges
// them as independent requests (the fleet planner's simulated probes).
func CountSLOs(res *record.Result, slos []record.SLO, tallies []Tally) {
	countSLOs(res, slos, tallies, false)
}

// CountSLOsInOrder is CountSLOs for a measured probe, fed its records in
// completion order: the tallies also keep which of them exceeded, so
// CheckSLO judges the share on its effective sample size
// (ExceedanceOf).
func CountSLOsInOrder(res *record.Result, slos []record.SLO, tallies []Tally) {
	countSLOs(res, slos, tallies, true)
}

func countSLOs(res *record.Result, slos []record.SLO, tallies []Tally, inOrder bool) {
	if res.Warmup {
		return
	}
	for i, b := range slos {
		met, judged := b.Judge(res)
		if !judged {
			continue
		}
		tallies[i].N++
		if !met {
			tallies[i].Exceed++
		}
		if inOrder {
			tallies[i].at = append(tallies[i].at, !met)
		}
	}
}

// DefaultMaxFailureRate is the capacity rule's bound on the share of
// failed requests when none is given: find-capacity's and the fleet
// planner's --max-failure-rate.
const DefaultMaxFailureRate = 0.01

// ProbeRule is the capacity rule's parameters: the SLOs that must hold,
// the confidence each is shown at, and the largest failure rate allowed.
// find-capacity judges its probes by it, and the fleet planner its fleet
// sizes.
type ProbeRule struct {
	SLOs           []record.SLO
	Confidence     float64
	MaxFailureRate float64
}

// SLOJudgement is the capacity rule's verdict on one load.
type SLOJudgement struct {
	Passed bool
	// Inconclusive: some SLO had too few samples to judge (then passed is
	// false too).
	Inconclusive bool
	// Missed: some SLO was shown not to hold, or the failure rate is
	// above its bound; a load that is only inconclusive has not missed.
	Missed bool
	// Reasons say, per SLO and for the failure rate, why it held or not;
	// Misses are those that did not.
	Reasons, Misses []string
}

// Judge is the capacity rule for one load: every SLO shown to hold by
// the binomial rule (CheckSLO) at the confidence, with tallies[i] counted
// for SLOs[i] by CountSLOs, and the failure rate within its bound.
func (r ProbeRule) Judge(failureRate float64, tallies []Tally) SLOJudgement {
	j := SLOJudgement{Passed: true, Reasons: []string{}}
	for i, b := range r.SLOs {
		v := CheckSLO(b, tallies[i], r.Confidence)
		j.Passed = j.Passed && v.Met
		j.Inconclusive = j.Inconclusive || !v.Conclusive
		j.Missed = j.Missed || (v.Conclusive && !v.Met)
		j.Reasons = append(j.Reasons, v.Reason)
		if !v.Met {
			j.Misses = append(j.Misses, v.Reason)
		}
	}
	if failureRate > r.MaxFailureRate {
		j.Passed, j.Missed = false, true
		miss := fmt.Sprintf("failure rate %.2f%% is above %.2f%%", failureRate*100, r.MaxFailureRate*100)
		j.Reasons, j.Misses = append(j.Reasons, miss), append(j.Misses, miss)
	}
	return j
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
	// MaxProbes ends the search after this many probes, confirmations
	// included (0: Budget's default).
	MaxProbes int
	// Confirm is how many times the answer is probed again before the
	// search ends (0: none). One probe can catch a server in a good
	// phase; a load counts as holding only while every probe at it
	// passed, so a failed confirmation makes the answer a failing load
	// and the search goes on below it.
	Confirm int `json:",omitempty"`
}

// DefaultSearch holds each SearchOptions default (Precision and
// MaxProbes), for the zero fields and for find-capacity's flags.
var DefaultSearch = SearchOptions{Precision: 0.10, MaxProbes: 10}

// ProbesPerConfirmation is how many probes each confirmation adds to the
// default budget: one to probe the answer again, and, when that fails,
// one to step back to the load below and one to confirm it. With the
// search's own 10 that gives 16 for --confirm 2, the setting the docs
// recommend on real servers.
const ProbesPerConfirmation = 3

// Budget is the search's probe budget: MaxProbes when set, else
// DefaultSearch's plus ProbesPerConfirmation for each confirmation, so
// asking for confirmations never leaves the answer unconfirmed for want
// of probes the search was not given.
func (o SearchOptions) Budget() int {
	if o.MaxProbes > 0 {
		return o.MaxProbes
	}
	return DefaultSearch.MaxProbes + ProbesPerConfirmation*max(o.Confirm, 0)
}

func (o SearchOptions) withDefaults() SearchOptions {
	o.Precision = cmp.Or(o.Precision, DefaultSearch.Precision)
	o.MaxProbes = o.Budget()
	return o
}

// NextLoad is the next load a capacity search should probe, given the
// loads that passed and failed so far, or done when the answer is known:
// the highest passing load below every failing one (0 when even Low
// failed). The search doubles from Low until a probe fails or High is
// reached, then bisects between the best pass and the lowest fail; once
// the bracket is closed it probes the answer again until it has
// o.Confirm passing probes beyond its first (Confirmations). A load that
// failed any probe is below no failing load, so a failed confirmation
// steps the answer back to the next pass below it, which the search
// bisects towards and confirms in turn. The budget (MaxProbes) counts
// every probe: when it runs out first the answer is unconfirmed.
func NextLoad(passed, failed []float64, o SearchOptions) (next float64, done bool) {
	o = o.withDefaults()
	if len(passed)+len(failed) >= o.MaxProbes {
		return 0, true
	}
	if next, done := bisect(passed, failed, o); !done {
		return next, false
	}
	answer := Capacity(passed, failed)
	if answer > 0 && Confirmations(passed, answer) < o.Confirm {
		return answer, false
	}
	return 0, true
}

// bisect is the search's next load before any confirmation: doubling,
// then bisecting, or done when the bracket is within the precision.
func bisect(passed, failed []float64, o SearchOptions) (next float64, done bool) {
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

// Confirmations is how many times load passed beyond its first passing
// probe: the confirmations of an answer (a load with a failed probe is
// no answer, whatever its passes).
func Confirmations(passed []float64, load float64) int {
	n := 0
	for _, p := range passed {
		if p == load {
			n++
		}
	}
	return max(n-1, 0)
}

// Capacity is the answer of a finished search: the highest load that
// passed below every failing one. A load probed more than once counts
// only if every probe at it passed: one failure puts it among the
// failing loads.
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
