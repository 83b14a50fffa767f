package summary

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferload/inferload/record"
)

// operatingOf is a sweep's recommended operating point (docs/experiments.md,
// "The operating point"): with objectives, the highest step at which every
// one held below every step that missed (the sweep's capacity, so an
// objective met again at a higher load after a miss does not count);
// without, the knee's fraction. Both point to find-capacity for the load
// between two steps. nil for any other design.
func operatingOf(d Design, k *record.Knee, c *record.Capacity) *record.OperatingPoint {
	if d.Kind != KindSweep || d.Knee == nil {
		return nil
	}
	mode := d.Knee.Mode
	load := func(v float64) string { return record.LoadText(v, mode) }
	if d.Capacity == nil || c == nil {
		op := &record.OperatingPoint{Mode: mode, Basis: record.OperatingKnee}
		if k != nil && k.Found {
			op.Found, op.Load = true, k.Recommended
			op.Reason = fmt.Sprintf("%s, %.0f%% of the knee at %s; no SLO was declared (workload.slo, a class's slo or --slo), so nothing says which loads meet one",
				load(k.Recommended), k.OperatingFraction*100, load(k.Load))
		} else {
			op.Reason = "none: no knee was found and no SLO was declared (workload.slo, a class's slo or --slo) to judge the steps by"
		}
		return op
	}
	op := &record.OperatingPoint{Found: c.Found, Load: c.Load, Mode: mode, Basis: record.OperatingSLO}
	objectives := strings.Join(c.SLOs, ", ")
	passed, failed := c.Verdicts()
	switch {
	case len(passed)+len(failed) == 0:
		op.Reason = fmt.Sprintf("none: no step could show whether %s held (too few samples, or invalid); lengthen the steps", objectives)
	case !c.Found:
		lowest := slices.Min(failed)
		op.Reason = fmt.Sprintf("none: no step met every objective (%s), not even the lowest judged, %s; search below it: %s",
			objectives, load(lowest), findCapacityCommand(d.Capacity, mode, 0, lowest))
	case len(failed) == 0:
		op.Reason = fmt.Sprintf("at least %s: every step met every objective (%s); add higher loads to find where they stop holding",
			load(c.Load), objectives)
	default:
		miss := slices.Min(failed)
		op.Reason = fmt.Sprintf("at most %s: the highest step at which every objective held (%s); %s missed; for the load between: %s",
			load(c.Load), objectives, load(miss), findCapacityCommand(d.Capacity, mode, c.Load, miss))
	}
	if k != nil && k.Found && c.Found && k.Load < c.Load {
		op.Reason += fmt.Sprintf("; past the knee at %s latency grows faster than throughput, so headroom is thinner there", load(k.Load))
	}
	return op
}

// findCapacityCommand is the find-capacity invocation that searches the
// loads between lo (a step that met every objective; 0 for none) and hi
// (one that missed) with the same objectives.
func findCapacityCommand(c *CapacityJudging, mode string, lo, hi float64) string {
	flag, low := "--users", max(1, lo)
	if mode == record.ModeOpen {
		flag, low = "--rates", lo
		if low == 0 {
			low = hi / 8
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "inferload find-capacity %s %g:%g", flag, low, hi)
	for _, o := range c.SLOs {
		for _, e := range o.Exprs() {
			fmt.Fprintf(&b, " --slo '%s'", e)
		}
	}
	return b.String()
}
