package capacity

import (
	"cmp"
	"fmt"
	"slices"
)

// Levels at one batch that disagree: a server running the same number of
// sequences at once, on the same requests, delivers the same requests per
// second, whatever the users offered. When levels whose mean scraped batch
// is within BatchSameSpread of each other differ in throughput by more
// than LevelsDisagreeShare, something beside the server (a busy host, a
// neighbour on the GPU, a throttled client) changed between them, and no
// profile can match them all: the fit is then a compromise the plan
// inherits. Checked on real llama.cpp sweeps (TRUTH.md, "Fleet on real
// replicas": a 1-slot server at 4.67, 6.49 and 7.67 requests/s at a batch
// of 0.9–1.0).
const (
	BatchSameSpread     = 0.15
	LevelsDisagreeShare = 0.25
)

// levelsDisagree says which levels ran one batch yet delivered throughputs
// too far apart, in words; "" when none did or no batch was scraped.
func levelsDisagree(steps []FitStep) string {
	var same []FitStep
	for _, s := range steps {
		if s.Batch > 0 && s.Throughput > 0 {
			same = append(same, s)
		}
	}
	if len(same) < 2 {
		return ""
	}
	// The largest group of levels whose batches lie within the spread of
	// the smallest of them.
	slices.SortFunc(same, func(a, b FitStep) int { return cmp.Compare(a.Batch, b.Batch) })
	var best []FitStep
	for i := range same {
		j := i
		for j < len(same) && same[j].Batch <= same[i].Batch*(1+BatchSameSpread) {
			j++
		}
		if j-i > len(best) {
			best = same[i:j]
		}
	}
	if len(best) < 2 {
		return ""
	}
	lo := slices.MinFunc(best, func(a, b FitStep) int { return cmp.Compare(a.Throughput, b.Throughput) })
	hi := slices.MaxFunc(best, func(a, b FitStep) int { return cmp.Compare(a.Throughput, b.Throughput) })
	if hi.Throughput <= lo.Throughput*(1+LevelsDisagreeShare) {
		return ""
	}
	return fmt.Sprintf("warning: levels disagree: at %d and %d users the server ran about %.1f sequences at once, yet delivered %.2f and %.2f requests/s (%+.0f%%); "+
		"a server does not speed up at a fixed batch, so the host or something beside the server changed between them and no profile can match both: "+
		"rerun the sweep with longer steps, on a quieter host, or with --repeat",
		lo.Users, hi.Users, (lo.Batch+hi.Batch)/2, lo.Throughput, hi.Throughput, 100*(hi.Throughput/lo.Throughput-1))
}
