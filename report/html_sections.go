package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/inferload/inferload/record"
)

func headlineSection(in *HTMLInput) *section {
	s := in.Summary
	m := s.Metrics
	sec := &section{ID: "headline", Title: "Headline",
		Help: "Measured window only: warm-up requests are left out. Latencies are milliseconds of successful requests."}
	var pcts map[string]string
	if s.Validity != nil {
		pcts = s.Validity.Percentiles
	}
	// latency is a P50 / P99 card, "-" without samples, a percentile its
	// samples do not back starred as in the terminal's tables.
	latency := func(label string, st record.Stats, metric string) card {
		if st.Count == 0 {
			return card{label, "-", "no samples"}
		}
		p50, p99 := pcts == nil || backedBy(pcts, metric, "p50"), pcts == nil || backedBy(pcts, metric, "p99")
		c := card{label, msCell(st, st.P50, p50) + " / " + msCell(st, st.P99, p99), "ms"}
		if !p50 || !p99 {
			c.Detail = "ms; " + unbackedNote
		}
		return c
	}
	sec.Cards = append(stepCards(s), []card{
		{"Requests", fmt.Sprintf("%d", s.Requests.Succeeded+s.Requests.Failed), fmt.Sprintf("%d ok · %d failed · %d warm-up", s.Requests.Succeeded, s.Requests.Failed, s.Requests.Warmup)},
		{"Failure rate", fmt.Sprintf("%.2f %%", 100*s.FailureRate), ""},
		{"Requests/s", fmt.Sprintf("%.2f", s.Throughput.RequestsPerS), ""},
		tokensCard(s),
		latency("TTFT P50 / P99", m.TTFT, "ttft"),
		latency("ITL P50 / P99", m.ITL, "itl"),
		latency("E2E P50 / P99", m.E2E, "e2e"),
	}...)
	if len(s.Steps) > 1 {
		sec.Title = "Headline: all steps pooled"
		sec.Help = fmt.Sprintf("The first cards are the steps' verdicts. The figures after them pool all %d steps, a mix of loads and not one operating point: read each load's figures under Load steps. Measured windows only; latencies are milliseconds of successful requests.", len(s.Steps))
	}
	sec.Cards = append(sec.Cards, goodputCards(s)...)
	if v := s.Validity; v != nil {
		sec.Cards = append(sec.Cards, card{"Valid", validWord(*v), backedText(v)})
		for _, r := range v.Reasons {
			sec.Notes = append(sec.Notes, "Validity: "+r)
		}
	}
	if s.Interrupted {
		sec.Notes = append(sec.Notes, "The run was interrupted.")
	}
	sec.Notes = append(sec.Notes, s.Warnings...)
	return sec
}

// tokensCard is output tokens/s, or for a run without tokens (a
// classifier behind the templated API) a card that says so.
func tokensCard(s *record.Summary) card {
	if s.Tokenless() {
		return card{"Tokens", "none", "the API sends no prompt and its replies are not text"}
	}
	return card{"Output tokens/s", fmt.Sprintf("%.1f", s.Throughput.OutputTokensPerS), "tokens " + s.Tokens.Source}
}

// stepCards lead a sweep's headline with its answers: where to run and
// where the knee is.
func stepCards(s *record.Summary) []card {
	var out []card
	if o := s.Operating; o != nil {
		v := "none"
		if o.Found {
			v = record.LoadText(o.Load, o.Mode)
		}
		basis := "highest step meeting every SLO"
		if o.Basis == record.OperatingKnee {
			basis = "a fraction of the knee (no SLO declared)"
		}
		out = append(out, card{"Run at", v, basis})
	}
	if k := s.Knee; k != nil {
		v := "none found"
		if k.Found {
			v = record.LoadText(k.Load, k.Mode)
		}
		out = append(out, card{"Knee", v, "throughput stops growing, latency climbs"})
	}
	return out
}

// goodputCards are goodput, when an SLO defines it, and the compute
// estimate, when the plan declares the model's size.
func goodputCards(s *record.Summary) []card {
	var out []card
	if g := s.Goodput; g.SLO != (record.SLO{}) || len(s.Classes) > 1 {
		out = append(out, card{"Goodput", fmt.Sprintf("%.2f req/s", g.RequestsPerS),
			fmt.Sprintf("%.1f %% met the SLO (%s)", 100*g.Attainment, sloText(g.SLO))})
	}
	if pr := s.PrefixReuse; pr != nil {
		out = append(out, card{"Prefix reuse", fmt.Sprintf("%.1f %% / %.1f %%", 100*pr.RequestedShare, 100*pr.AchievedShare),
			fmt.Sprintf("asked / served over %d requests (%s)", pr.Requests, servedFrom(pr))})
	}
	if a := s.Accuracy; a != nil {
		out = append(out, card{"Accuracy", fmt.Sprintf("%.1f %%", 100*a.Rate),
			fmt.Sprintf("%d of %d graded replies correct · %d unparsable", a.Correct, a.Graded, a.Unparsable)})
	}
	if c := s.Compute; c != nil {
		out = append(out, card{"Compute", fmt.Sprintf("%s TFLOP/s", num(c.AchievedFLOPPerS/1e12)),
			fmt.Sprintf("achieved · %s TFLOP/s offered · %sB params", num(c.OfferedFLOPPerS/1e12), num(c.Model.ParamsB))})
	}
	return out
}

// sloText writes the bounds an SLO checks, e.g. "TTFT ≤ 500 ms".
func sloText(o record.SLO) string {
	var parts []string
	for _, b := range []struct {
		name string
		v    float64
	}{{"TTFT", o.TTFTMs}, {"TTFO", o.TTFOMs}, {"TPOT", o.TPOTMs}, {"E2E", o.E2EMs}} {
		if b.v > 0 {
			parts = append(parts, fmt.Sprintf("%s ≤ %s ms", b.name, num(b.v)))
		}
	}
	if len(parts) == 0 {
		return "per class"
	}
	return strings.Join(parts, ", ")
}

func thresholdSection(in *HTMLInput) *section {
	ths := in.Summary.Thresholds
	if len(ths) == 0 {
		return nil
	}
	sec := &section{ID: "thresholds", Title: "Thresholds",
		Help: "The plan's pass/fail checks. One failure makes the run exit with code 99."}
	for _, t := range ths {
		v := verdict{Passed: t.Passed, Expr: t.Expr}
		if t.Error != "" {
			v.Detail = t.Error
		} else {
			v.Detail = fmt.Sprintf("%s = %s", t.Metric, num(t.Value))
		}
		sec.Verdicts = append(sec.Verdicts, v)
	}
	return sec
}

func percentileSection(in *HTMLInput) *section {
	m := in.Summary.Metrics
	type row struct {
		name string
		st   record.Stats
	}
	rows := []row{{"TTFT", m.TTFT}, {"ITL", m.ITL}, {"TPOT", m.TPOT}, {"E2E", m.E2E}}
	if m.QueueDelay.Count > 0 { // the client's own wait, open loop only (as the terminal)
		rows = append(rows, row{"Client queue", m.QueueDelay})
	}
	rows = append(rows, row{"E2E (failed)", in.Summary.FailedE2E})
	t := table{Caption: "milliseconds", Head: []string{"metric", "n", "mean", "p50", "p90", "p95", "p99", "p99.9", "max"}}
	add := func(t *table, name string, st record.Stats) {
		if st.Count == 0 { // nothing measured: "-", as the terminal says
			t.Rows = append(t.Rows, []string{name, "0", "-", "-", "-", "-", "-", "-", "-"})
			return
		}
		t.Rows = append(t.Rows, []string{name, fmt.Sprintf("%d", st.Count), ms(st.Mean),
			ms(st.P50), ms(st.P90), ms(st.P95), ms(st.P99), ms(st.P999), ms(st.Max)})
	}
	for _, r := range rows {
		add(&t, r.name, r.st)
	}
	sec := &section{ID: "percentiles", Title: "Latency percentiles", Tables: []table{t},
		Help: "TTFT: send to first token. ITL: gaps between tokens. TPOT: (E2E − TTFT) / (tokens − 1). E2E: send to end of stream. In open-loop runs latency counts from the intended send time."}
	if m.TTFR != nil && m.TTFO != nil && m.ReasoningPhase != nil && m.ITLReasoning != nil && m.ITLAnswer != nil {
		// A reasoning model's per-channel rows, only when some request
		// reasoned (as the terminal).
		rt := table{Caption: "reasoning, milliseconds", Head: t.Head}
		add(&rt, "TTFR", *m.TTFR)
		add(&rt, "TTFO", *m.TTFO)
		add(&rt, "Reasoning phase", *m.ReasoningPhase)
		add(&rt, "ITL reasoning", *m.ITLReasoning)
		add(&rt, "ITL answer", *m.ITLAnswer)
		sec.Tables = append(sec.Tables, rt)
		sec.Help += " Reasoning: TTFR is send to the first reasoning token, TTFO to the first answer token (TTFT for a request that did not reason), the phase TTFO − TTFR; ITL per channel leaves out the gap between the two and requests whose channels interleave."
	}
	return sec
}

func distributionSection(in *HTMLInput) *section {
	d := in.Digest
	if d == nil {
		return nil
	}
	sec := &section{ID: "distributions", Title: "Latency distributions",
		Help: "How many requests (or token gaps, for ITL) fell in each latency bin; the x axis is logarithmic. Two humps mean two populations: look for a class, a cache miss or a queue."}
	for _, h := range []struct {
		id, title string
		bins      *[latencyBins]int64
	}{{"dist-ttft", "TTFT", &d.ttft}, {"dist-itl", "ITL", &d.itl}, {"dist-e2e", "E2E", &d.e2e}} {
		if c, ok := histChart(h.id, h.title, h.bins[:]); ok {
			sec.Charts = append(sec.Charts, c)
		}
	}
	if len(sec.Charts) == 0 {
		return nil
	}
	return sec
}

// histChart trims empty bins at both ends so the bars fill the chart.
func histChart(id, title string, bins []int64) (chart, bool) {
	lo := slices.IndexFunc(bins, func(n int64) bool { return n > 0 })
	if lo < 0 {
		return chart{}, false
	}
	hi := len(bins) - 1
	for bins[hi] == 0 {
		hi--
	}
	c := chart{ID: id, Kind: "hist", Title: title + " (ms)", YLabel: "count"}
	counts := make([]*float64, 0, hi-lo+1)
	for b := lo; b <= hi; b++ {
		c.X = append(c.X, binEdgeMS(b))
		counts = append(counts, ptr(float64(bins[b])))
	}
	c.Series = []line{{Label: "count", Values: counts, Color: "#4c78a8"}}
	return c, true
}

func heatSection(in *HTMLInput) *section {
	d := in.Digest
	if d == nil || d.e2eHeat.empty() {
		return nil
	}
	sec := &section{ID: "heatmap", Title: "Latency over time",
		Help: "Each column is a slice of the run, each row a latency bin (log scale); darker cells hold more requests. A band that climbs is a drift a single P99 hides; a second band is a second population."}
	if !d.ttftHeat.empty() {
		sec.Charts = append(sec.Charts, heatChart("heat-ttft", "TTFT over time (ms)", &d.ttftHeat))
	}
	sec.Charts = append(sec.Charts, heatChart("heat-e2e", "E2E over time (ms)", &d.e2eHeat))
	return sec
}

func heatChart(id, title string, h *heat) chart {
	lo, hi := latencyBins, -1
	for _, col := range h.cols {
		for b, n := range col {
			if n > 0 {
				lo, hi = min(lo, b), max(hi, b)
			}
		}
	}
	c := chart{ID: id, Kind: "heat", Title: title, WidthS: float64(h.widthS), YLabel: "ms"}
	for b := lo; b <= hi+1; b++ {
		c.Y = append(c.Y, binEdgeMS(b))
	}
	for i, col := range h.cols {
		c.X = append(c.X, float64(int64(i)*h.widthS))
		c.Cells = append(c.Cells, slices.Clone(col[lo:hi+1]))
	}
	return c
}

func timelineSection(in *HTMLInput) *section {
	if len(in.Series) == 0 {
		return nil
	}
	ws := downsample(in.Series, maxPoints)
	x := make([]float64, len(ws))
	var tok, ok, failed, ttft50, ttft99, e2e99, lag99 []*float64
	lagged := false
	for i, w := range ws {
		x[i] = w.t
		if in.Digest != nil {
			tok = append(tok, ptr(in.Digest.output.PerSecond(w.t, w.t+w.widthS)))
		}
		ok = append(ok, ptr(w.succeeded/w.widthS))
		failed = append(failed, ptr(w.failed/w.widthS))
		ttft50 = append(ttft50, gap(w.ttftP50))
		ttft99 = append(ttft99, gap(w.ttftP99))
		e2e99 = append(e2e99, gap(w.e2eP99))
		lag99 = append(lag99, gap(w.readLagP99))
		lagged = lagged || w.readLagP99 > 0
	}
	latency := []line{{Label: "TTFT p50", Values: ttft50, Color: "#72b7b2"},
		{Label: "TTFT p99", Values: ttft99, Color: "#4c78a8"},
		{Label: "E2E p99", Values: e2e99, Color: "#f58518"}}
	if lagged { // kernel clock: how late the client read, beside what it measured
		latency = append(latency, line{Label: "client read lag p99", Values: lag99, Color: "#b279a2"})
	}
	return &section{ID: "timeline", Title: "Throughput and failures over time",
		Help: "Per-second windows (averaged over several seconds on long runs); vertical lines are run events. Output tokens/s on the left axis, counted as they streamed in (as the summary's throughput counts them); requests/s on the right, by completion.",
		Charts: []chart{
			{ID: "time-throughput", Kind: "time", Title: "Throughput", X: x, YLabel: "output tokens/s", Y2Label: "requests/s",
				Series: throughputLines(tok, ok, failed)},
			{ID: "time-latency", Kind: "time", Title: "Latency per window", X: x, YLabel: "ms",
				Series: latency},
		}}
}

// throughputLines are the throughput chart's series; output tokens/s only
// when the records were read (tok is nil without a digest).
func throughputLines(tok, ok, failed []*float64) []line {
	var out []line
	if tok != nil {
		out = append(out, line{Label: "output tokens/s", Values: tok, Color: "#4c78a8"})
	}
	return append(out, line{Label: "succeeded/s", Values: ok, Right: true, Color: "#54a24b"},
		line{Label: "failed/s", Values: failed, Right: true, Color: "#e45756"})
}

// span is one drawn point: several series windows folded together.
type span struct {
	t, widthS                float64
	succeeded, failed        float64
	ttftP50, ttftP99, e2eP99 float64
	readLagP99               float64 // the client's, on the kernel clock
}

// downsample folds consecutive windows into at most n spans: counts add
// up (then divide by the span's width into rates), tail latencies take the
// worst window so a spike is never averaged away, and P50 the mean.
func downsample(ws []record.Window, n int) []span {
	per := (len(ws) + n - 1) / n
	out := make([]span, 0, min(len(ws), n))
	for i := 0; i < len(ws); i += per {
		group := ws[i:min(i+per, len(ws))]
		sp := span{t: float64(group[0].TS), widthS: float64(len(group))}
		var p50n float64
		for _, w := range group {
			sp.succeeded += float64(w.Succeeded)
			sp.failed += float64(w.Failed)
			sp.ttftP99 = max(sp.ttftP99, w.TTFTP99MS)
			sp.e2eP99 = max(sp.e2eP99, w.E2EP99MS)
			sp.readLagP99 = max(sp.readLagP99, w.ReadLagP99MS)
			if w.TTFTP50MS > 0 {
				sp.ttftP50 += w.TTFTP50MS
				p50n++
			}
		}
		if p50n > 0 {
			sp.ttftP50 /= p50n
		}
		out = append(out, sp)
	}
	return out
}

func errorSection(in *HTMLInput) *section {
	errs := in.Summary.Errors
	if len(errs) == 0 {
		return nil
	}
	kinds := make([]string, 0, len(errs))
	for k := range errs {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	t := table{Head: []string{"kind", "count"}}
	for _, k := range kinds {
		t.Rows = append(t.Rows, []string{k, fmt.Sprintf("%d", errs[k])})
	}
	return &section{ID: "errors", Title: "Errors", Tables: []table{t},
		Help: "Failed measured requests by kind (see docs/summary.md for the taxonomy)."}
}

// retrySection shows what retries cost (summary.json retries): attempts
// against requests, the amplification, what was retried and why retrying
// stopped.
func retrySection(in *HTMLInput) *section {
	rt := in.Summary.Retries
	if rt == nil {
		return nil
	}
	sec := &section{ID: "retries", Title: "Retries",
		Help: "Attempts sent for the measured requests, first tries included. Amplification above 1 means the server saw more load than the plan offered. Gave up: retryable failures that were not retried, by reason (max_attempts, budget, retry_after, stopped).",
		Cards: []card{
			{"Attempts", fmt.Sprintf("%d", rt.Attempts), fmt.Sprintf("for %d requests", rt.Requests)},
			{"Amplification", fmt.Sprintf("%.2f×", rt.Amplification), "attempts ÷ requests"},
			{"Retried", fmt.Sprintf("%d", rt.Retried), fmt.Sprintf("%d succeeded only after a retry", rt.SucceededAfterRetry)},
		}}
	for _, kv := range []struct {
		head string
		m    map[string]int64
	}{{"retried after", rt.RetriedErrors}, {"gave up because", rt.GaveUp}} {
		if len(kv.m) == 0 {
			continue
		}
		keys := make([]string, 0, len(kv.m))
		for k := range kv.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t := table{Head: []string{kv.head, "count"}}
		for _, k := range keys {
			t.Rows = append(t.Rows, []string{k, fmt.Sprintf("%d", kv.m[k])})
		}
		sec.Tables = append(sec.Tables, t)
	}
	return sec
}

func eventSection(in *HTMLInput) *section {
	if len(in.Events) == 0 {
		return nil
	}
	t := table{Head: []string{"time (s)", "event", "message"}}
	for _, e := range in.Events {
		t.Rows = append(t.Rows, []string{fmt.Sprintf("%.3f", float64(e.TimeUS)/1e6), string(e.Kind), e.Message})
	}
	return &section{ID: "events", Title: "Events", Tables: []table{t},
		Help: "Annotations on the run clock; each is a vertical line on the time charts."}
}

// ms formats milliseconds with three significant-ish digits.
func ms(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func num(v float64) string { return fmt.Sprintf("%.4g", v) }

func ptr(v float64) *float64 { return &v }

// gap is nil (a gap in the line) for a window with no value.
func gap(v float64) *float64 {
	if v == 0 {
		return nil
	}
	return &v
}
