package experiment

import (
	"context"
	"fmt"

	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/summary"
)

// SoakOptions describe a soak: one long run cut into windows whose
// figures are tested for drift (the design's summary.SoakDesign).
type SoakOptions = summary.SoakDesign

// Soak runs the plan like Run, cuts the measured window into Window-long
// windows by completion time, and tests P99 TTFT, P99 E2E, throughput and
// failure rate for drift. The windows are cut from the records one at a
// time as they are written (or read back, on a rebuild), so memory stays
// flat however long the soak, and the live report shows the drift verdict.
func Soak(ctx context.Context, p *plan.Plan, opts Options, o SoakOptions) (*Outcome, error) {
	if o.Window <= 0 {
		return nil, fmt.Errorf("soak: window %s: want a positive duration", o.Window)
	}
	return runSingle(ctx, p, opts, summary.Design{Kind: summary.KindSoak, Soak: &o})
}
