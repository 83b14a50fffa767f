package summary

import (
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
)

// SoakDesign describes a soak: one long run cut into windows whose
// figures are tested for drift.
type SoakDesign struct {
	// Window is each window's length (e.g. 5m).
	Window time.Duration `json:"window"`
	// Drift says when a trend counts; failure rate always uses an
	// absolute change of at least 1 percentage point.
	Drift analyze.DriftOptions `json:"drift"`
}

// soakOf is a soak's windows and drift from its windower, fed every
// record in the order written (recordsFold).
func soakOf(w *windower, s *record.Summary, o *SoakDesign) *record.Soak {
	n := soakWindowCount(s.WindowS, o.Window)
	windows := w.windows(n)
	span := time.Duration(float64(n) * o.Window.Seconds() * float64(time.Second))
	drift := []record.Drift{}
	if ttft := w.latency(w.ttftQ, w.ttftN, n); ttft[0].Samples > 0 { // TTFT only when the run streamed
		drift = append(drift, latencyDrift("TTFT", ttft, span, *o)...)
	}
	drift = append(drift, latencyDrift("E2E", w.latency(w.e2eQ, w.e2eN, n), span, *o)...)
	drift = append(drift, soakDrift(windows, span, *o)...)
	return &record.Soak{WindowS: o.Window.Seconds(), Windows: windows, Drift: drift}
}

// windower cuts the records into windows by completion time, closing each
// window as the next one starts: records arrive in completion order, so
// one pair of histograms is enough (a straggler from a closed window
// counts in the current one), and memory stays flat however long the
// soak. How many windows the measured span holds is known only at the
// run's end (windows), so every window is kept until then.
//
// Each latency's quantiles are also grouped into windows of their own,
// sized to back them (quantileWindower); ttftN and e2eN count each base
// window's values.
type windower struct {
	fromUS, lenUS   int64
	ttft, e2e       *record.Hist
	succeeded, fail int64
	out             []record.SoakWindow
	ttftQ, e2eQ     []*quantileWindower
	ttftN, e2eN     []int64
}

func newWindower(fromUS int64, window time.Duration) *windower {
	return &windower{fromUS: fromUS, lenUS: window.Microseconds(),
		ttft: record.NewHist(), e2e: record.NewHist(), out: []record.SoakWindow{},
		ttftQ: newQuantileWindowers(), e2eQ: newQuantileWindowers()}
}

// latency is one latency's quantile windows within the first n base
// windows; counts are its values per base window.
func (w *windower) latency(qs []*quantileWindower, counts []int64, n int) []analyze.QuantileWindows {
	var samples int64
	for _, c := range counts[:min(n, len(counts))] {
		samples += c
	}
	out := make([]analyze.QuantileWindows, len(qs))
	for i, g := range qs {
		out[i] = g.series(n, samples)
	}
	return out
}

// windows returns the first n windows: those after them hold the drain
// after issuing stopped, which no window measures.
func (w *windower) windows(n int) []record.SoakWindow {
	for len(w.out) < n {
		w.close()
	}
	return w.out[:n]
}

func (w *windower) add(r *record.Result) {
	if r.Warmup {
		return
	}
	if r.DoneUS() < w.fromUS {
		return // before the measured span
	}
	i := int((r.DoneUS() - w.fromUS) / w.lenUS)
	for len(w.out) < i {
		w.close()
	}
	if !r.OK() {
		w.fail++
		return
	}
	w.succeeded++
	w.e2e.Record(r.E2EUS)
	for _, g := range w.e2eQ {
		g.hist.Record(r.E2EUS)
	}
	if ttft, ok := record.TTFTUS(r); ok {
		w.ttft.Record(ttft)
		for _, g := range w.ttftQ {
			g.hist.Record(ttft)
		}
	}
}

// close finishes the window in progress and starts the next.
func (w *windower) close() {
	total := w.succeeded + w.fail
	sw := record.SoakWindow{
		StartS:       float64(w.fromUS+int64(len(w.out))*w.lenUS) / 1e6,
		Requests:     total,
		RequestsPerS: float64(w.succeeded) / (float64(w.lenUS) / 1e6),
		TTFTP99:      w.ttft.Stats().P99,
		E2EP99:       w.e2e.Stats().P99,
		// The confidence every soak figure is backed at (DriftNeed).
		TTFTBacked: analyze.Backed(w.ttft.Count(), analyze.DefaultConfidence),
		E2EBacked:  analyze.Backed(w.e2e.Count(), analyze.DefaultConfidence),
	}
	if total > 0 {
		sw.FailureRate = float64(w.fail) / float64(total)
	}
	for _, qs := range [][]*quantileWindower{w.ttftQ, w.e2eQ} {
		for _, g := range qs {
			g.closeWindow(len(w.out), w.lenUS)
		}
	}
	w.ttftN, w.e2eN = append(w.ttftN, w.ttft.Count()), append(w.e2eN, w.e2e.Count())
	w.out = append(w.out, sw)
	w.ttft.Reset()
	w.e2e.Reset()
	w.succeeded, w.fail = 0, 0
}

// latencyDrift tests each quantile of one latency in its own windows
// (analyze.QuantileDrift: the quantiles share --alpha).
func latencyDrift(metric string, qs []analyze.QuantileWindows, span time.Duration, o SoakDesign) []record.Drift {
	out := []record.Drift{}
	for _, v := range analyze.QuantileDrift(metric, qs, span, o.Window, o.Drift) {
		d := driftRecord(v.DriftVerdict)
		d.NeededSamples, d.WindowMinSamples = v.Need, v.MinN
		out = append(out, d)
	}
	return out
}

// soakDrift tests the per-window throughput and failure rate, each at
// --alpha.
func soakDrift(ws []record.SoakWindow, span time.Duration, o SoakDesign) []record.Drift {
	series := func(f func(record.SoakWindow) float64) []float64 {
		v := make([]float64, len(ws))
		for i, w := range ws {
			v[i] = f(w)
		}
		return v
	}
	abs := o.Drift
	abs.Absolute, abs.MinChange = true, 0.01
	return []record.Drift{
		driftRecord(analyze.Drift("throughput", series(func(w record.SoakWindow) float64 { return w.RequestsPerS }), span, o.Drift)),
		driftRecord(analyze.Drift("failure rate", series(func(w record.SoakWindow) float64 { return w.FailureRate }), span, abs)),
	}
}

func driftRecord(d analyze.DriftVerdict) record.Drift {
	return record.Drift{Metric: d.Metric, Tested: d.Tested, Change: d.Change, ChangeLow: d.ChangeLow, ChangeHigh: d.ChangeHigh,
		Level: d.Level, PValue: d.P, Alpha: d.Alpha, Significant: d.Significant, Drifted: d.Drifted, Windows: d.Windows,
		Verdict: d.Verdict}
}
