package analyze

import (
	"fmt"

	"github.com/inferload/inferload/observe"
)

// scrapeWarnings say which scrape sources gave the run nothing, so a
// server without metrics never passes for one with an idle queue. Over
// every sample of the run (a source dead from the start is dead in the
// warm-up too), per scrape source (not the client, not local GPUs):
//
//   - never answered: every sample is a gap; the first error is quoted
//     (llama.cpp without --metrics answers HTTP 501);
//   - answered, but no series came of it: no sample holds a value, so the
//     metric map (observe.server, auto-detected or declared) matched none
//     of the names the server exposes.
//
// The rule is exact on telemetry.jsonl: it cannot be wrong about what the
// samples hold, only about why (the advice names the likely cause).
func scrapeWarnings(samples []observe.Sample) []string {
	type seen struct{ samples, answered, valued int }
	by := map[string]*seen{}
	var order []string
	firstErr := map[string]string{}
	for _, smp := range samples {
		if smp.Source == "client" || smp.Source == "gpu" {
			continue
		}
		st := by[smp.Source]
		if st == nil {
			st = &seen{}
			by[smp.Source] = st
			order = append(order, smp.Source)
		}
		st.samples++
		switch {
		case smp.Gap:
			if _, ok := firstErr[smp.Source]; !ok {
				firstErr[smp.Source] = smp.Error
			}
		case len(smp.Values) > 0:
			st.answered++
			st.valued++
		default:
			st.answered++
		}
	}
	var w []string
	for _, src := range order {
		st := by[src]
		switch {
		case st.answered == 0:
			w = append(w, fmt.Sprintf("scrape source %s never answered in %d tries (%s): no server or GPU figures from it "+
				"(is the server started with its metrics endpoint on, e.g. llama.cpp --metrics? set observe.scrape, or off)",
				src, st.samples, firstErr[src]))
		case st.valued == 0:
			w = append(w, fmt.Sprintf("scrape source %s answered %d times but none of its metrics matched the metric map: "+
				"no server figures from it (check observe.server / --server-kind, or leave it on auto)", src, st.answered))
		}
	}
	return w
}
