package capacity

import (
	"fmt"
	"math"
	"time"

	"github.com/inferload/inferload/sim"
)

// How a decode step's cost grows with the batch is the difference
// between a CPU server and a GPU one. On a CPU thread every sequence's
// token is its own matrix-vector work, so a step of 8 costs about 8
// steps of 1 and batching buys little. On a GPU the step is bound by
// reading the weights from memory once, shared by the whole batch, so a
// step of 8 costs little more than a step of 1. The simulator's cost
// model says both with two figures (sim.CostModel): the step overhead,
// paid once per step, and the decode cost per sequence; the fit learns
// them with the other costs, searching from the base and again from the
// line through the levels' TPOT against their batch (seededCosts), since
// one shape lies too far from the other for one search to walk
// (TestFitLearnsBatchCost). It can only where the levels ran different
// batches: batchUnidentified says when they did not (a one-slot server,
// or a sweep that stays at one batch), and BatchCostShape says what was
// learned in words.

// batchCurve is decode time per token against the running batch, fitted
// to the levels as a line: TPOT = Overhead + batch × PerSeq.
type batchCurve struct {
	Overhead, PerSeq time.Duration
	// From and To are the smallest and largest batch the levels ran.
	From, To float64
}

// minBatchSpread is how much larger the largest batch must be than the
// smallest for the line's slope to be read from the levels: a batch of
// 1 against 1.5 moves the step time by half a sequence's cost, about the
// run-to-run noise of a busy host.
const minBatchSpread = 1.5

// levelBatch is the batch level s ran: the mean of the server's scraped
// running batch while it ran when there is one (Batch), else its users,
// capped by the server's limit.
func levelBatch(s FitStep, limit int) float64 {
	if s.Batch > 0 {
		return s.Batch
	}
	return float64(min(s.Users, max(limit, 1)))
}

// fitBatchCurve fits the line by least squares to each level's TPOT P50
// at its batch (levelBatch). ok is false when the batches spread less
// than minBatchSpread: then no slope can be read.
func fitBatchCurve(steps []FitStep, limit int) (batchCurve, bool) {
	var n, sx, sy, sxx, sxy float64
	c := batchCurve{From: math.Inf(1)}
	for _, s := range steps {
		x, y := levelBatch(s, limit), float64(s.TPOTP50)
		c.From, c.To = math.Min(c.From, x), math.Max(c.To, x)
		n, sx, sy, sxx, sxy = n+1, sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	if n < 2 || c.To < minBatchSpread*c.From {
		return c, false
	}
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	c.PerSeq = time.Duration(slope)
	c.Overhead = time.Duration((sy - slope*sx) / n)
	return c, true
}

// seededCosts is base with its step overhead and decode cost per
// sequence taken from the line (fitBatchCurve), where the levels
// identify it: where a second search starts. A negative intercept or
// slope (noise, or prompts computed in the same steps) is floored at a
// hundredth of the step at one sequence, so the search, which moves in
// logarithms, can start there.
func seededCosts(base sim.Profile, steps []FitStep) (sim.Profile, bool) {
	c, ok := fitBatchCurve(steps, base.MaxNumSeqs)
	at1 := c.Overhead + c.PerSeq
	if !ok || at1 <= 0 {
		return base, false
	}
	base.Cost.StepOverhead = max(c.Overhead, at1/100)
	base.Cost.DecodePerSeq = max(c.PerSeq, at1/100)
	return base, true
}

// batchUnidentified says that the levels could not tell the step
// overhead from the per-sequence cost, or "" when they could.
func batchUnidentified(steps []FitStep, limit int) string {
	c, ok := fitBatchCurve(steps, limit)
	if ok {
		return ""
	}
	return fmt.Sprintf("decode cost against batch: every level ran %.1f to %.1f sequences at once, under the %.1fx spread that tells a step's fixed cost from its cost per sequence, so the fitted split between step_overhead and decode_per_seq (how the cost grows with the batch) is not the server's; sweep from 1 user to past its batch limit to pin it",
		c.From, c.To, minBatchSpread)
}

// BatchCostShape says in words how c's decode cost per token moves with
// the batch: the step time of one decoding sequence and of eight, and
// what each sequence's token costs at eight against one (KV reads left
// out: they grow with context, not batch). A compute-bound server (a CPU
// on one thread) gains little from batching (near ×1); a memory-bound
// one reads its weights once per step for the whole batch (far below).
func BatchCostShape(c sim.CostModel) string {
	one, eight := c.StepTime(0, 1, 0, 0), c.StepTime(0, 8, 0, 0)
	gain := float64(eight) / 8 / float64(one)
	return fmt.Sprintf("step %s at 1 seq, %s at 8: a token costs ×%.2f at 8", one.Round(10*time.Microsecond), eight.Round(10*time.Microsecond), gain)
}
