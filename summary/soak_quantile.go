package summary

import (
	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
)

// quantileWindower groups a soak's base windows into one quantile's own
// windows, each closed at the first base window that brings its count to
// analyze.DriftNeed: a P50 is tested on the base windows themselves
// (5 values back it), a P99 on runs of them holding 299 values, so no
// window's quantile is claimed from fewer samples than back it. Memory
// is one histogram whatever the soak's length.
type quantileWindower struct {
	q     analyze.DriftQuantile
	need  int64
	hist  *record.Hist
	first int // the base window the window in progress started at
	out   []quantileWindow
}

// quantileWindow is one closed window: base windows first..last.
type quantileWindow struct {
	last  int
	t, ms float64 // midpoint in seconds from the soak's start; the quantile
	n     int64
}

func newQuantileWindowers() []*quantileWindower {
	out := make([]*quantileWindower, len(analyze.DriftQuantiles))
	for i, q := range analyze.DriftQuantiles {
		out[i] = &quantileWindower{q: q, need: int64(analyze.DriftNeed(q.Q)), hist: record.NewHist()}
	}
	return out
}

// closeWindow ends base window idx, lenUS long, whose values were
// recorded in g.hist as they came (merging whole histograms at each
// close cost more than every record of a soak at 10 requests/s).
func (g *quantileWindower) closeWindow(idx int, lenUS int64) {
	if g.hist.Count() < g.need {
		return
	}
	fromUS, toUS := int64(g.first)*lenUS, int64(idx+1)*lenUS
	g.out = append(g.out, quantileWindow{last: idx, t: float64(fromUS+toUS) / 2e6,
		ms: float64(g.hist.QuantileUS(g.q.Q)) / 1e3, n: g.hist.Count()})
	g.hist.Reset()
	g.first = idx + 1
}

// series is the quantile's windows within the first n base windows (the
// measured span; those after it hold the drain) and the values those
// held, samples.
func (g *quantileWindower) series(n int, samples int64) analyze.QuantileWindows {
	qw := analyze.QuantileWindows{DriftQuantile: g.q, Samples: samples}
	for _, w := range g.out {
		if w.last >= n {
			break // the trailing run, completed only by the drain
		}
		qw.Times, qw.Values = append(qw.Times, w.t), append(qw.Values, w.ms)
		if qw.MinN == 0 || w.n < qw.MinN {
			qw.MinN = w.n
		}
	}
	return qw
}
