package report

import (
	"fmt"
	"math"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
)

// stepsSection draws a staged run or sweep against its load: throughput
// and failure rate on two axes, latency percentiles per step, the knee
// and the recommended operating point marked, and the server's KV cache
// and GPU utilisation during each step overlaid when telemetry exists.
func stepsSection(in *HTMLInput) *section {
	s := in.Summary
	if len(s.Steps) == 0 {
		return nil
	}
	sec := &section{ID: "steps", Title: "Load steps",
		Help: "One point per step of the staged run or sweep, at its target load. Healthy load raises throughput and leaves latency flat; past the knee throughput stops growing while latency climbs. The recommended point leaves headroom below the knee."}
	xl := loadLabel(s.Steps[0].Mode)
	x := make([]float64, len(s.Steps))
	var tok, fail []*float64
	for i, st := range s.Steps {
		x[i] = st.Target
		tok = append(tok, ptr(st.Throughput.OutputTokensPerS))
		fail = append(fail, ptr(100*st.FailureRate))
	}
	marks := stepMarks(s)
	curve := chart{ID: "steps-throughput", Kind: "curve", Title: "Throughput and failures against load", X: x, XLabel: xl,
		YLabel: "output tokens/s", Y2Label: "%", VMarks: marks,
		Series: []line{{Label: "output tokens/s", Values: tok, Color: "#4c78a8"},
			{Label: "failure rate %", Values: fail, Right: true, Color: "#e45756"}}}
	curve.Series = append(curve.Series, stepTelemetry(in)...)
	lat := chart{ID: "steps-latency", Kind: "curve", Title: "Latency percentiles against load", X: x, XLabel: xl,
		YLabel: "ms", VMarks: marks}
	short := make([]bool, len(s.Steps))
	for _, sl := range stepLatencyLines {
		lat.Series = append(lat.Series, stepLatencyLine(s.Steps, sl, short))
	}
	unbacked := 0
	for _, sh := range short {
		if sh {
			unbacked++
		}
	}
	sec.Charts = []chart{curve, lat}
	sec.Tables = []table{stepTable(s.Steps)}
	if unbacked > 0 {
		sec.Notes = append(sec.Notes, fmt.Sprintf("%d of %d steps hold too few samples to back a percentile the latency chart draws at 95%% confidence (a P99 needs 299); those points are left out of the chart (the table marks them *).",
			unbacked, len(s.Steps)))
	}
	sec.Notes = append(sec.Notes, stepVerdicts(s)...)
	for _, st := range s.Steps {
		for _, r := range st.Validity.Reasons {
			sec.Notes = append(sec.Notes, fmt.Sprintf("Step %d: %s", st.Index, r))
		}
	}
	return sec
}

// stepLatency is one line of the steps' latency chart: a metric's
// percentile, under the name Validity.Percentiles keys it by.
type stepLatency struct {
	label, metric, pct, color string
	value                     func(record.Metrics) float64
}

// stepLatencyLines are the latency chart's lines, in drawing order.
var stepLatencyLines = []stepLatency{
	{"TTFT p50", "ttft", "p50", "#72b7b2", func(m record.Metrics) float64 { return m.TTFT.P50 }},
	{"TTFT p99", "ttft", "p99", "#4c78a8", func(m record.Metrics) float64 { return m.TTFT.P99 }},
	{"ITL p99", "itl", "p99", "#b279a2", func(m record.Metrics) float64 { return m.ITL.P99 }},
	{"E2E p99", "e2e", "p99", "#f58518", func(m record.Metrics) float64 { return m.E2E.P99 }},
}

// stepLatencyLine draws sl over the steps, leaving out the points whose
// step's samples do not back sl's percentile (the rule the steps table
// stars them by) and marking those steps in short.
func stepLatencyLine(steps []record.Step, sl stepLatency, short []bool) line {
	l := line{Label: sl.label, Color: sl.color}
	for i := range steps {
		st := &steps[i]
		p, ok := backedPoint(sl.value(st.Metrics), st.Validity.Percentiles[sl.metric], sl.pct)
		l.Values = append(l.Values, p)
		if !ok {
			short[i] = true
		}
	}
	return l
}

// stepVerdicts are what a staged run concludes from its steps, its answer
// first: the operating point, the knee, the SLO capacity.
func stepVerdicts(s *record.Summary) []string {
	var out []string
	if o := s.Operating; o != nil {
		out = append(out, "Run at: "+o.Reason)
	}
	if k := s.Knee; k != nil {
		out = append(out, "Knee: "+k.Reason)
	}
	if c := s.Capacity; c != nil {
		out = append(out, "Capacity: "+c.Reason)
	}
	return out
}

// loadLabel names the x axis of a step chart by the loop's mode.
func loadLabel(mode string) string {
	if mode == "open" {
		return "offered rate (requests/s)"
	}
	return "concurrency (users)"
}

// stepMarks are the knee and the recommended operating point (a sweep's,
// else the knee's fraction) as vertical lines.
func stepMarks(s *record.Summary) []annotation {
	var out []annotation
	k := s.Knee
	if k != nil && k.Found {
		out = append(out, annotation{T: k.Load, Label: "knee " + num(k.Load)})
	}
	switch o := s.Operating; {
	case o != nil && o.Found:
		out = append(out, annotation{T: o.Load, Label: "run at " + num(o.Load)})
	case o == nil && k != nil && k.Found:
		out = append(out, annotation{T: k.Recommended, Label: "recommended " + num(k.Recommended)})
	}
	return out
}

// stepTable lists each step's figures, with its validity verdict.
func stepTable(steps []record.Step) table {
	t := table{Caption: "latencies in ms; " + unbackedNote, Head: []string{"step", "load", "req/s", "out tok/s", "TTFT p50", "TTFT p99", "ITL p99", "E2E p99", "fail %", "goodput/s", "valid"}}
	for i := range steps {
		st := &steps[i]
		m := st.Metrics
		t.Rows = append(t.Rows, []string{fmt.Sprint(st.Index), num(st.Target), fmt.Sprintf("%.2f", st.Throughput.RequestsPerS),
			fmt.Sprintf("%.1f", st.Throughput.OutputTokensPerS),
			msCell(m.TTFT, m.TTFT.P50, backs(st, "ttft", "p50")), msCell(m.TTFT, m.TTFT.P99, backs(st, "ttft", "p99")),
			msCell(m.ITL, m.ITL.P99, backs(st, "itl", "p99")), msCell(m.E2E, m.E2E.P99, backs(st, "e2e", "p99")),
			fmt.Sprintf("%.2f", 100*st.FailureRate), fmt.Sprintf("%.2f", st.GoodputPerS), validWord(st.Validity)})
	}
	return t
}

// validWord is a step's validity verdict in a word: an invalid step is
// never used for the knee, a weak one has a reason to read.
func validWord(v record.Validity) string {
	switch {
	case !v.Valid:
		return "no"
	case len(v.Reasons) > 0:
		return "weak"
	}
	return "yes"
}

// stepTelemetry averages KV cache use and GPU utilisation over each
// step's measured window (its last window_s seconds before the next step
// starts), across every server source, as percentages on the right axis.
func stepTelemetry(in *HTMLInput) []line {
	if len(in.Telemetry) == 0 {
		return nil
	}
	var out []line
	for _, spec := range []struct {
		series, label, color string
		scale                float64
	}{{observe.KVCacheUsage, "KV cache %", "#b279a2", 100}, {observe.GPUUtil, "GPU utilisation %", "#54a24b", 1}} {
		vals, any := make([]*float64, len(in.Summary.Steps)), false
		for i := range in.Summary.Steps {
			lo, hi := stepRange(in, i)
			if v, ok := meanIn(in.Telemetry, spec.series, lo, hi); ok {
				vals[i], any = ptr(v*spec.scale), true
			}
		}
		if any {
			out = append(out, line{Label: spec.label, Values: vals, Right: true, Color: spec.color})
		}
	}
	return out
}

// stepRange is step i's measured window on the run clock in seconds: it
// ends where the next step starts (or at the measure_end event) and lasts
// its window_s, so the step's warm-up is left out.
func stepRange(in *HTMLInput, i int) (lo, hi float64) {
	steps := in.Summary.Steps
	hi = math.Inf(1)
	if i+1 < len(steps) {
		hi = steps[i+1].StartS
	} else {
		for _, e := range in.Events {
			if e.Kind == record.EventMeasureEnd {
				hi = float64(e.TimeUS) / 1e6
			}
		}
	}
	lo = steps[i].StartS
	if !math.IsInf(hi, 1) {
		lo = max(lo, hi-steps[i].WindowS)
	}
	return lo, hi
}

// meanIn averages one series over samples in [lo, hi), skipping gaps and
// the client's own source.
func meanIn(samples []observe.Sample, series string, lo, hi float64) (float64, bool) {
	var sum float64
	n := 0
	for _, s := range samples {
		t := float64(s.TimeUS) / 1e6
		v, ok := s.Values[series]
		if !ok || s.Gap || s.Source == "client" || t < lo || t >= hi {
			continue
		}
		sum += v
		n++
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// backedPoint is a percentile for a chart: a gap when there was no
// value, or one too few values back (left out rather than drawn beside
// backed ones as their equal); ok is false only for the second. backed is
// the highest percentile the values back (analyze.Backed).
func backedPoint(v float64, backed, pct string) (point *float64, ok bool) {
	if v == 0 {
		return nil, true
	}
	if !backsPercentile(backed, pct) {
		return nil, false
	}
	return &v, true
}

// soakSection shows a soak's verdicts: which windowed figures drifted,
// and the windows themselves over time.
func soakSection(in *HTMLInput) *section {
	sk := in.Summary.Soak
	if sk == nil || len(sk.Windows) == 0 && len(sk.Drift) == 0 {
		return nil
	}
	sec := &section{ID: "soak", Title: "Soak drift",
		Help: fmt.Sprintf("The run cut into %s s windows; each figure is tested for a trend from the first window to the last (a latency's P50, P90 and P99 each in windows holding enough requests to back it). A significant rise of a latency (or fall of throughput) is a drift: a leak, a fragmenting cache or a growing queue.", num(sk.WindowS))}
	for _, d := range sk.Drift {
		if !d.Tested { // neither stable nor drifted: the soak was too short to say
			sec.Notes = append(sec.Notes, d.Verdict)
			continue
		}
		sec.Verdicts = append(sec.Verdicts, verdict{Passed: !d.Drifted, Expr: d.Metric + " stable", Detail: d.Verdict})
	}
	if len(sk.Windows) == 0 {
		return sec
	}
	x := make([]float64, len(sk.Windows))
	var rps, ttft, e2e []*float64
	var unbacked int
	for i, w := range sk.Windows {
		x[i] = w.StartS
		rps = append(rps, ptr(w.RequestsPerS))
		t, tOK := backedPoint(w.TTFTP99, w.TTFTBacked, "p99")
		e, eOK := backedPoint(w.E2EP99, w.E2EBacked, "p99")
		ttft, e2e = append(ttft, t), append(e2e, e)
		if !tOK || !eOK {
			unbacked++
		}
	}
	if unbacked > 0 {
		sec.Notes = append(sec.Notes, fmt.Sprintf("%d of %d windows hold too few values to back a P99 at 95%% confidence (299); their P99s are left out of the chart (soak.windows[] keeps them, with ttft_backed and e2e_backed).",
			unbacked, len(sk.Windows)))
	}
	sec.Charts = []chart{{ID: "soak-windows", Kind: "time", Title: "Soak windows", X: x, YLabel: "ms", Y2Label: "requests/s",
		Series: []line{{Label: "TTFT p99", Values: ttft, Color: "#4c78a8"},
			{Label: "E2E p99", Values: e2e, Color: "#f58518"},
			{Label: "requests/s", Values: rps, Right: true, Color: "#54a24b"}}}}
	return sec
}
