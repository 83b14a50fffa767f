package cli

import (
	"fmt"

	"github.com/inferload/inferload/record"
)

// The collector's page judges sessions, tasks and goodput by the plan's
// rules (monitorOptions), as a run's page and summary.json do. The page
// is up before any segment has sent its plan, and its tables take their
// rules before their first record (live.Monitor.Configure); so records
// that come first are held until a plan has come. Segments send their
// plan in their first upload, before their first record, so in practice
// nothing waits; maxHeld bounds the wait when a plan is lost.

// maxHeld is how many records the page holds back waiting for a plan;
// past it they are shown under the default rules, with a note.
const maxHeld = 1 << 16

// errNoPlan is the page's note when it gave up waiting for a plan.
var errNoPlan = fmt.Errorf("no segment had sent its plan.yaml by the %d-th record: the page's tables use the default input buckets and judge no SLO (the merged summary judges by the plan)", maxHeld)

// observe shows r on the page once the monitor has its rules, holding
// it until then.
func (v *collectView) observe(r *record.Result) {
	v.heldMu.Lock()
	defer v.heldMu.Unlock()
	if v.ruled {
		v.mon.Observe(r)
		return
	}
	v.held = append(v.held, r)
	v.ruleLocked(len(v.held) >= maxHeld)
}

// release gives the monitor its rules once a plan has come, or at once
// when force is set (the run is over), and shows the records held.
func (v *collectView) release(force bool) {
	v.heldMu.Lock()
	defer v.heldMu.Unlock()
	v.ruleLocked(force)
}

// ruleLocked is release with heldMu held.
func (v *collectView) ruleLocked(force bool) {
	if v.ruled {
		return
	}
	p := v.runPlan()
	switch {
	case p != nil:
		// Only observe feeds the monitor, and only once ruled: it has
		// observed nothing yet, and this cannot fail; if it ever did,
		// the page says so rather than judge silently without the SLOs.
		if err := v.mon.Configure(monitorOptions(p, v.now)); err != nil {
			v.mon.Mark(v.mon.Elapsed(), string(record.EventNote), err.Error())
		}
	case !force:
		return
	case len(v.held) > 0:
		v.mon.Mark(v.mon.Elapsed(), string(record.EventNote), errNoPlan.Error())
	}
	v.ruled = true
	for _, r := range v.held {
		v.mon.Observe(r)
	}
	v.held = nil
}
