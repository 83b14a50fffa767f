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
	windows := w.windows(soakWindowCount(s.WindowS, o.Window))
	return &record.Soak{WindowS: o.Window.Seconds(), Windows: windows, Drift: soakDrift(windows, *o)}
}

// windower cuts the records into windows by completion time, closing each
// window as the next one starts: records arrive in completion order, so
// one pair of histograms is enough (a straggler from a closed window
// counts in the current one), and memory stays flat however long the
// soak. How many windows the measured span holds is known only at the
// run's end (windows), so every window is kept until then.
type windower struct {
	fromUS, lenUS   int64
	ttft, e2e       *record.Hist
	succeeded, fail int64
	out             []record.SoakWindow
}

func newWindower(fromUS int64, window time.Duration) *windower {
	return &windower{fromUS: fromUS, lenUS: window.Microseconds(),
		ttft: record.NewHist(), e2e: record.NewHist(), out: []record.SoakWindow{}}
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
	if ttft, ok := record.TTFTUS(r); ok {
		w.ttft.Record(ttft)
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
	}
	if total > 0 {
		sw.FailureRate = float64(w.fail) / float64(total)
	}
	w.out = append(w.out, sw)
	w.ttft.Reset()
	w.e2e.Reset()
	w.succeeded, w.fail = 0, 0
}

// soakDrift tests each windowed figure; TTFT only when the run streamed.
func soakDrift(ws []record.SoakWindow, o SoakDesign) []record.Drift {
	span := time.Duration(float64(len(ws)) * o.Window.Seconds() * float64(time.Second))
	series := func(f func(record.SoakWindow) float64) []float64 {
		v := make([]float64, len(ws))
		for i, w := range ws {
			v[i] = f(w)
		}
		return v
	}
	abs := o.Drift
	abs.Absolute, abs.MinChange = true, 0.01
	tests := []struct {
		name string
		v    []float64
		opts analyze.DriftOptions
	}{
		{"P99 TTFT", series(func(w record.SoakWindow) float64 { return w.TTFTP99 }), o.Drift},
		{"P99 E2E", series(func(w record.SoakWindow) float64 { return w.E2EP99 }), o.Drift},
		{"throughput", series(func(w record.SoakWindow) float64 { return w.RequestsPerS }), o.Drift},
		{"failure rate", series(func(w record.SoakWindow) float64 { return w.FailureRate }), abs},
	}
	out := []record.Drift{}
	for _, t := range tests {
		if t.name == "P99 TTFT" && allZero(t.v) {
			continue
		}
		d := analyze.Drift(t.name, t.v, span, t.opts)
		out = append(out, record.Drift{Metric: d.Metric, Change: d.Change, PValue: d.P,
			Significant: d.Significant, Drifted: d.Drifted, Verdict: d.Verdict})
	}
	return out
}

func allZero(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}
