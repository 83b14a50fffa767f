package summary

import (
	"fmt"
	"strings"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
)

// markConfirmations marks each probe at a load probed before as a
// confirmation and counts the answer's passing ones
// (analyze.Confirmations), as the search chose them (analyze.NextLoad).
func markConfirmations(c *record.Capacity, passed []float64, confirm int) {
	c.Confirm = confirm
	seen := map[float64]bool{}
	for i := range c.Probes {
		p := &c.Probes[i]
		p.Confirmation = seen[p.Load]
		seen[p.Load] = true
	}
	if c.Found {
		c.Confirmations = analyze.Confirmations(passed, c.Load)
	}
}

// confirmationReason says, after the answer, which confirmations failed
// and where the search stepped back, and whether the answer was
// confirmed: a search whose budget or interruption left it short says
// so, so an unconfirmed answer is never read as a confirmed one.
func confirmationReason(o *CapacityJudging, c *record.Capacity) string {
	if c.Confirm == 0 {
		return ""
	}
	unit := func(v float64) string { return record.LoadText(v, o.Mode) }
	var b strings.Builder
	for _, p := range c.Probes {
		if p.Confirmation && !p.Passed {
			fmt.Fprintf(&b, "; the confirmation at %s (step %d) failed, so %s counts as failing and the search stepped back below it", unit(p.Load), p.Step, unit(p.Load))
		}
	}
	budget := o.Search.Budget()
	switch {
	case !c.Found:
	case c.Confirmations >= c.Confirm:
		fmt.Fprintf(&b, "; confirmed %d of %d: every one of the %d probes at %s passed", c.Confirmations, c.Confirm, c.Confirmations+1, unit(c.Load))
	case len(c.Probes) >= budget:
		fmt.Fprintf(&b, "; UNCONFIRMED: the probe budget (%d) ran out after %d of %d confirmations at %s (raise --max-probes)", budget, c.Confirmations, c.Confirm, unit(c.Load))
	default:
		fmt.Fprintf(&b, "; UNCONFIRMED: the search stopped after %d of %d confirmations at %s", c.Confirmations, c.Confirm, unit(c.Load))
	}
	return b.String()
}
