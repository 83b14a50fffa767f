package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/inferload/inferload/record"
)

// Accuracy-drop hint thresholds (docs/telemetry.md, "Bottleneck hints"):
// the lowest-load and highest-load valid steps with at least
// AccuracyMinGraded graded replies each are compared by a one-sided
// two-proportion z test (twoProportions' Wald z) at AccuracyAlpha, and
// the drop must also be at least AccuracyMinDrop, so a tiny but
// significant drop over thousands of replies does not fire.
const (
	AccuracyMinGraded = 30
	AccuracyAlpha     = 0.01
	AccuracyMinDrop   = 0.05
)

// accuracyFalls fires when answers get worse as load rises across a
// sweep's steps: a serving bug (a batching or KV-cache fault, a
// quantised fallback under pressure, truncated tool calls) that no
// latency figure shows. Load is each step's target; the steps compared
// are the valid ones with enough graded replies.
func accuracyFalls(in hintInput) *record.Hint {
	var steps []record.Step
	for _, st := range in.s.Steps {
		if st.Validity.Valid && st.Accuracy != nil && st.Accuracy.Graded >= AccuracyMinGraded {
			steps = append(steps, st)
		}
	}
	if len(steps) < 2 {
		return nil
	}
	slices.SortStableFunc(steps, func(a, b record.Step) int { return cmp.Compare(a.Target, b.Target) })
	lo, hi := steps[0], steps[len(steps)-1]
	if lo.Target == hi.Target {
		return nil
	}
	drop, ok := accuracyDrop(lo.Accuracy, hi.Accuracy)
	if !ok {
		return nil
	}
	return &record.Hint{Rule: "accuracy_falls",
		Message: fmt.Sprintf("answers got worse as load rose: accuracy %.1f%% at step %d (load %g) and %.1f%% at step %d (load %g), %d and %d graded replies; unparsable %.1f%% → %.1f%%",
			100*lo.Accuracy.Rate, lo.Index, lo.Target, 100*hi.Accuracy.Rate, hi.Index, hi.Target,
			lo.Accuracy.Graded, hi.Accuracy.Graded, 100*lo.Accuracy.UnparsableRate, 100*hi.Accuracy.UnparsableRate),
		Figures: map[string]float64{"accuracy_low_load": lo.Accuracy.Rate, "accuracy_high_load": hi.Accuracy.Rate,
			"drop": drop, "low_load": lo.Target, "high_load": hi.Target}}
}

// accuracyDrop is the accuracy lost from low to high, and whether it is
// both at least AccuracyMinDrop and significant by the one-sided pooled
// two-proportion z test: z = drop / √(p̄(1−p̄)(1/n₁+1/n₂)), p̄ the pooled
// accuracy, firing when P(Z > z) < AccuracyAlpha. Pooled, not the
// unpooled Wald z of twoProportions (which the baseline comparison's
// intervals need): the hypothesis tested is "the two rates are equal",
// under which pooling estimates the one rate. The Wald z fired on 1.1%
// of equal-accuracy sweeps (100 graded replies a step), above α.
func accuracyDrop(low, high *record.Accuracy) (float64, bool) {
	n1, n2 := float64(low.Graded), float64(high.Graded)
	drop := float64(low.Correct)/n1 - float64(high.Correct)/n2
	pooled := float64(low.Correct+high.Correct) / (n1 + n2)
	se := math.Sqrt(pooled * (1 - pooled) * (1/n1 + 1/n2))
	if se == 0 {
		return drop, false // every reply right, or every one wrong, at both loads
	}
	p := math.Erfc(drop/se/math.Sqrt2) / 2
	return drop, drop >= AccuracyMinDrop && p < AccuracyAlpha
}
