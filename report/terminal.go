// Package report renders a run: the final terminal table, the live progress
// line, summary.json, CSV, JUnit XML, InfluxDB line protocol, the HTML
// report and the comparison of two runs. Renderers write to an io.Writer or
// a file and nothing else: sending anything over the network (InfluxDB
// writes, Prometheus remote write, /metrics) belongs to package live. It
// knows nothing of how the figures were produced; everything comes from
// record.Summary and the run directory's files.
package report

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
)

// latencyColumns are the latency table's columns after the row label.
var latencyColumns = []string{"p50", "p90", "p95", "p99", "p99.9", "max", "mean", "n"}

const (
	labelWidth = 14
	cellWidth  = 9
)

// WriteSummary writes the final summary table: requests, errors by kind,
// throughput, tokens, a latency table in milliseconds, then warnings. A
// run of several steps leads with its verdicts and steps table: its
// run-wide figures pool every load, so they come after, headed as such.
func WriteSummary(w io.Writer, s *record.Summary) error {
	var b bytes.Buffer
	writeHeader(&b, s)
	pooled := len(s.Steps) > 1
	if pooled {
		writeSteps(&b, s)
		fmt.Fprintf(&b, "\nAll %d steps pooled: a mix of loads, not one operating point (each load's figures are in Steps)\n\n", len(s.Steps))
	}
	writeCounts(&b, s)
	b.WriteByte('\n')
	writeLatencies(&b, s)
	writeServerTime(&b, s.ServerTime)
	writeClasses(&b, s)
	writeBuckets(&b, s)
	writeChains(&b, s)
	writeSessions(&b, s)
	if !pooled {
		writeSteps(&b, s)
	}
	writeTelemetry(&b, s)
	writeWarnings(&b, s.Warnings)
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write summary table: %w", err)
	}
	return nil
}

func writeHeader(b *bytes.Buffer, s *record.Summary) {
	fmt.Fprintf(b, "inferload run %q: %s loop, %.1f s measured, started %s",
		s.Name, s.Mode, s.WindowS, s.Started.Format("2006-01-02 15:04:05 MST"))
	if s.Interrupted {
		b.WriteString("  [INTERRUPTED]")
	}
	b.WriteString("\n\n")
}

func writeCounts(b *bytes.Buffer, s *record.Summary) {
	r := s.Requests
	row(b, "Requests", fmt.Sprintf("%d total   %d succeeded   %d failed   %d warm-up   %d late",
		r.Total, r.Succeeded, r.Failed, r.Warmup, r.Late))
	if r.ExpectedRejections > 0 {
		row(b, "Bad input", fmt.Sprintf("%d expected rejections (4xx to bad input: passes, not failures)", r.ExpectedRejections))
	}
	row(b, "Failure rate", fmt.Sprintf("%.2f %%", 100*s.FailureRate))
	row(b, "Errors", errorList(s.Errors))
	if rt := s.Retries; rt != nil {
		row(b, "Retries", fmt.Sprintf("%d attempts for %d requests (amplification %.2fx)   %d retried   %d succeeded only after a retry   gave up: %s",
			rt.Attempts, rt.Requests, rt.Amplification, rt.Retried, rt.SucceededAfterRetry, errorList(rt.GaveUp)))
	}
	t := s.Throughput
	if s.Tokenless() {
		row(b, "Throughput", fmt.Sprintf("%.2f req/s   (no tokens: the API sends no prompt and its replies are not text)", t.RequestsPerS))
		writeGoodput(b, s)
	} else {
		row(b, "Throughput", fmt.Sprintf("%.2f req/s   %.1f output tok/s   %.1f input tok/s",
			t.RequestsPerS, t.OutputTokensPerS, t.InputTokensPerS))
		writeGoodput(b, s)
		k := s.Tokens
		row(b, "Tokens", fmt.Sprintf("source %s (%d usage, %d counted)   input %d   output %d   reasoning %d",
			k.Source, k.UsageReported, k.Counted, k.InputTotal, k.OutputTotal, k.ReasoningTotal))
		writePrefixReuse(b, s.PrefixReuse)
	}
	if a := s.Accuracy; a != nil {
		row(b, "Accuracy", accuracyText(a))
	}
	if c := s.Checks; c.IgnoreEOSChecked > 0 {
		row(b, "ignore_eos", fmt.Sprintf("%d of %d honoured", c.IgnoreEOSChecked-c.IgnoreEOSNotHonoured, c.IgnoreEOSChecked))
	}
	writeValidity(b, s.Validity)
}

// writePrefixReuse shows the prefix reuse the workload asked for beside
// what the server says its cache served, when the workload asked.
func writePrefixReuse(b *bytes.Buffer, pr *record.PrefixReuse) {
	if pr == nil {
		return
	}
	row(b, "Prefix reuse", fmt.Sprintf("asked %.1f %% of input tokens   served %.1f %% (%s)",
		100*pr.RequestedShare, 100*pr.AchievedShare, servedFrom(pr)))
}

// servedFrom says where prefix reuse's share served came from.
func servedFrom(pr *record.PrefixReuse) string {
	switch pr.AchievedFrom {
	case record.ReuseFromCounters:
		return fmt.Sprintf("the server's prefix-cache counters over the measured window; no reply of %d reported cached tokens", pr.Requests)
	case record.ReuseFromHitRate:
		return fmt.Sprintf("the server's prefix-cache hit rate over the measured window; no reply of %d reported cached tokens", pr.Requests)
	case record.ReuseFromNone:
		return fmt.Sprintf("no reply of %d reported cached tokens, nor did the server's metrics", pr.Requests)
	}
	return fmt.Sprintf("server's cached tokens; %d of %d requests had some", pr.CachedRequests, pr.Requests)
}

// accuracyText is graded replies' accuracy in words.
func accuracyText(a *record.Accuracy) string {
	return fmt.Sprintf("%.1f %% correct (%d of %d graded replies)   %d unparsable (%.1f %%)",
		100*a.Rate, a.Correct, a.Graded, a.Unparsable, 100*a.UnparsableRate)
}

// writeValidity shows a single-phase run's verdict: which percentiles the
// samples back, and why the run is not valid when it is not.
func writeValidity(b *bytes.Buffer, v *record.Validity) {
	if v == nil {
		return
	}
	verdict := "valid"
	if !v.Valid {
		verdict = "NOT VALID: " + strings.Join(v.Reasons, "; ")
	}
	row(b, "Validity", fmt.Sprintf("%s   (%s)", verdict, backedText(v)))
}

// backedText says in plain words how far up the tail the run's sample
// counts let a reader trust the TTFT and E2E percentiles (validity's
// Percentiles: the highest one each backs, by docs/metrics.md "Minimum
// samples").
func backedText(v *record.Validity) string {
	ttft, e2e := v.Percentiles["ttft"], v.Percentiles["e2e"]
	upTo := func(p string) string {
		if p == "" || p == "none" {
			return "no percentile"
		}
		if p == "p999" {
			return "percentiles up to P99.9"
		}
		return "percentiles up to " + strings.ToUpper(p)
	}
	if ttft == e2e {
		if ttft == "" || ttft == "none" {
			return "too few requests to trust any TTFT or E2E percentile"
		}
		return "enough requests to trust TTFT and E2E " + upTo(ttft)
	}
	return fmt.Sprintf("enough requests to trust TTFT %s, E2E %s", upTo(ttft), upTo(e2e))
}

// writeGoodput shows goodput when the plan set an SLO (without one it
// equals throughput) and the FLOPs estimate when the plan declared a model.
func writeGoodput(b *bytes.Buffer, s *record.Summary) {
	sloSet := s.Goodput.SLO != (record.SLO{})
	names := make([]string, 0, len(s.Classes))
	for name, c := range s.Classes {
		sloSet = sloSet || c.Goodput.SLO != (record.SLO{})
		names = append(names, name)
	}
	if sloSet {
		sort.Strings(names)
		parts := []string{fmt.Sprintf("%.2f req/s   %.1f %% met SLO", s.Goodput.RequestsPerS, 100*s.Goodput.Attainment)}
		for _, name := range names {
			if len(names) > 1 {
				parts = append(parts, fmt.Sprintf("%s %.1f %%", name, 100*s.Classes[name].Goodput.Attainment))
			}
		}
		row(b, "Goodput", strings.Join(parts, "   "))
	}
	if c := s.Compute; c != nil {
		row(b, "Compute", fmt.Sprintf("offered %.3g FLOP/s   achieved %.3g FLOP/s (prefill %.3g, decode %.3g)",
			c.OfferedFLOPPerS, c.AchievedFLOPPerS, c.AchievedPrefillFLOPPerS, c.AchievedDecodeFLOPPerS))
	}
}

func row(b *bytes.Buffer, label, value string) {
	fmt.Fprintf(b, "%-*s%s\n", labelWidth, label, value)
}

// errorList shows kinds in the taxonomy's order, then any unknown kind
// (from a newer build's records) alphabetically.
func errorList(errs map[string]int64) string {
	if len(errs) == 0 {
		return "none"
	}
	var parts []string
	known := map[string]bool{}
	for _, k := range record.ErrorKinds {
		known[string(k)] = true
		if n := errs[string(k)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	var other []string
	for k, n := range errs {
		if !known[k] {
			other = append(other, fmt.Sprintf("%s %d", k, n))
		}
	}
	sort.Strings(other)
	return strings.Join(append(parts, other...), ", ")
}

func writeLatencies(b *bytes.Buffer, s *record.Summary) {
	fmt.Fprintf(b, "%-*s", labelWidth, "Latency (ms)")
	for _, c := range latencyColumns {
		fmt.Fprintf(b, "%*s", cellWidth, c)
	}
	b.WriteByte('\n')
	m := s.Metrics
	starred := latencyRow(b, "TTFT", m.TTFT)
	starred = latencyRow(b, "ITL", m.ITL) || starred
	starred = latencyRow(b, "TPOT", m.TPOT) || starred
	starred = latencyRow(b, "E2E", m.E2E) || starred
	if m.QueueDelay.Count > 0 {
		// The client's own wait, open loop only: in a closed loop there is
		// none, and an empty row beside a server that queued would read as
		// "no queue".
		starred = latencyRow(b, "Client queue", m.QueueDelay) || starred
	}
	starred = latencyRow(b, "Failed E2E", s.FailedE2E) || starred
	starred = writeReasoning(b, s) || starred
	footnote(b, starred)
}

// writeReasoning adds the per-channel rows of a run where some request
// reasoned (docs/metrics.md#reasoning): none otherwise, so other models'
// summaries are unchanged. It reports whether it starred a percentile.
func writeReasoning(b *bytes.Buffer, s *record.Summary) (starred bool) {
	m := s.Metrics
	if m.TTFR == nil || s.Reasoning == nil {
		return false
	}
	rs := s.Reasoning
	fmt.Fprintf(b, "Reasoning: %d requests reasoned", rs.Requests)
	if rs.Unanswered > 0 {
		fmt.Fprintf(b, ", %d cut off before answering", rs.Unanswered)
	}
	if rs.Interleaved > 0 {
		fmt.Fprintf(b, ", %d interleaved (no per-channel ITL)", rs.Interleaved)
	}
	b.WriteByte('\n')
	for _, row := range []struct {
		label string
		st    *record.Stats
	}{{"TTFR", m.TTFR}, {"TTFO", m.TTFO}, {"Reasoning", m.ReasoningPhase},
		{"ITL reasoning", m.ITLReasoning}, {"ITL answer", m.ITLAnswer}} {
		if row.st != nil {
			starred = latencyRow(b, row.label, *row.st) || starred
		}
	}
	return starred
}

// footnote explains the "*" under a table that printed one.
func footnote(b *bytes.Buffer, starred bool) {
	if starred {
		b.WriteString("  " + unbackedNote + "\n")
	}
}

// backedByCount reports whether a distribution's sample count backs its
// percentile q at the confidence the tables' "*" is read at.
func backedByCount(st record.Stats, q float64) bool {
	return st.Count >= int64(analyze.MinSamples(q, analyze.DefaultConfidence))
}

// writeServerTime shows where the time went by the server's account
// (summary.json server_time), when some reply carried server timings.
func writeServerTime(b *bytes.Buffer, st *record.ServerTimeSummary) {
	if st == nil {
		return
	}
	fmt.Fprintf(b, "\n%-*s", labelWidth, "Server time (ms)")
	for _, c := range latencyColumns {
		fmt.Fprintf(b, "%*s", cellWidth, c)
	}
	b.WriteByte('\n')
	starred := false
	if st.QueueMS != nil {
		starred = latencyRow(b, "Queue", *st.QueueMS)
	}
	if st.WaitMS != nil {
		starred = latencyRow(b, "Wait (inferred)", *st.WaitMS) || starred
	}
	starred = latencyRow(b, "Prefill", st.PrefillMS) || starred
	starred = latencyRow(b, "Decode", st.DecodeMS) || starred
	if st.WaitMS == nil {
		starred = latencyRow(b, "Outside server", st.OutsideMS) || starred
	}
	footnote(b, starred)
	if st.WaitMS != nil {
		fmt.Fprintf(b, "(the server reports no queue: the wait is inferred as time outside the server beyond its least, %s ms, the network and HTTP floor)\n",
			formatMS(st.OutsideFloorMS))
	}
	if st.FromSpans > 0 {
		fmt.Fprintf(b, "(%d of %d from the server's OTLP spans)\n", st.FromSpans, st.Requests)
	}
}

// latencyRow prints one metric; a metric with no values shows dashes
// rather than zeros that could be mistaken for measurements.
// latencyRow writes one distribution's row, a percentile its count does
// not back starred; it reports whether it starred one.
func latencyRow(b *bytes.Buffer, label string, st record.Stats) (starred bool) {
	fmt.Fprintf(b, "%-*s", labelWidth, label)
	cells := []struct {
		v, q float64 // q 0: max and mean, which no count backs or not
	}{{st.P50, 0.5}, {st.P90, 0.9}, {st.P95, 0.95}, {st.P99, 0.99}, {st.P999, 0.999}, {st.Max, 0}, {st.Mean, 0}}
	for _, c := range cells {
		backed := c.q == 0 || backedByCount(st, c.q)
		starred = starred || (!backed && st.Count > 0)
		fmt.Fprintf(b, "%*s", cellWidth, msCell(st, c.v, backed))
	}
	fmt.Fprintf(b, "%*d\n", cellWidth, st.Count)
	return starred
}

// formatMS keeps about four significant digits: 0.052, 1.23, 12.3, 123.4, 12345.
func formatMS(ms float64) string {
	switch {
	case ms == 0:
		return "0"
	case ms < 1:
		return fmt.Sprintf("%.3f", ms)
	case ms < 10:
		return fmt.Sprintf("%.2f", ms)
	case ms < 1000:
		return fmt.Sprintf("%.1f", ms)
	default:
		return fmt.Sprintf("%.0f", ms)
	}
}

// breakdownColumns are the per-class and per-bucket tables' columns after
// the row label: what a reader compares across kinds of traffic.
var breakdownColumns = []string{"req", "fail %", "rejected", "TTFT p50", "TTFT p99", "TPOT p99", "E2E p99"}

// writeClasses shows one row per request class, sorted by name, when the
// run had more than one (a single class would repeat the table above).
func writeClasses(b *bytes.Buffer, s *record.Summary) {
	if len(s.Classes) < 2 {
		return
	}
	names := make([]string, 0, len(s.Classes))
	for name := range s.Classes {
		names = append(names, name)
	}
	sort.Strings(names)
	breakdownHeader(b, "Class")
	starred := false
	for _, name := range names {
		starred = breakdownRow(b, name, s.Classes[name]) || starred
	}
	footnote(b, starred)
}

// writeBuckets shows one row per input-length bucket, shortest first, when
// requests fell into more than one: it is where short requests queueing
// behind long ones shows.
func writeBuckets(b *bytes.Buffer, s *record.Summary) {
	used := 0
	for _, k := range s.InputBuckets {
		if k.Requests.Total > 0 {
			used++
		}
	}
	if used < 2 {
		return
	}
	breakdownHeader(b, "Input tokens")
	starred := false
	for k := range s.InputBuckets {
		starred = breakdownRow(b, s.InputBuckets[k].Label, &s.InputBuckets[k].Breakdown) || starred
	}
	footnote(b, starred)
}

func breakdownHeader(b *bytes.Buffer, label string) {
	fmt.Fprintf(b, "\n%-*s", labelWidth, label)
	for _, c := range breakdownColumns {
		fmt.Fprintf(b, "%*s", cellWidth, c)
	}
	b.WriteByte('\n')
}

// breakdownRow prints one class or bucket; latencies it has no value for
// show a dash.
func breakdownRow(b *bytes.Buffer, label string, d *record.Breakdown) (starred bool) {
	r := d.Requests
	fmt.Fprintf(b, "%-*s%*d%*.2f%*d", labelWidth, clipLabel(label), cellWidth, r.Total-r.Warmup,
		cellWidth, 100*d.FailureRate, cellWidth, r.ExpectedRejections)
	m := d.Metrics
	for _, c := range []struct {
		st   record.Stats
		v, q float64
	}{{m.TTFT, m.TTFT.P50, 0.5}, {m.TTFT, m.TTFT.P99, 0.99}, {m.TPOT, m.TPOT.P99, 0.99}, {m.E2E, m.E2E.P99, 0.99}} {
		backed := backedByCount(c.st, c.q)
		starred = starred || (!backed && c.st.Count > 0)
		fmt.Fprintf(b, "%*s", cellWidth, msCell(c.st, c.v, backed))
	}
	b.WriteByte('\n')
	return starred
}

// clipLabel keeps a row label inside its column, with a space to spare.
// Class names are ASCII (plan validation), so bytes are columns.
func clipLabel(s string) string {
	if len(s) >= labelWidth {
		return s[:labelWidth-4] + "..."
	}
	return s
}

func writeWarnings(b *bytes.Buffer, warnings []string) {
	if len(warnings) == 0 {
		return
	}
	fmt.Fprintf(b, "\nWARNINGS (%d)\n", len(warnings))
	for _, w := range warnings {
		fmt.Fprintf(b, "  ! %s\n", w)
	}
}

// writeTelemetry prints the client's saturation verdict (loudly when it
// was saturated) and the bottleneck hints, each with its figures.
func writeTelemetry(b *bytes.Buffer, s *record.Summary) {
	if s.Client != nil {
		b.WriteByte('\n')
		if s.Client.Saturated {
			fmt.Fprintf(b, "!! CLIENT SATURATED: results may be invalid\n")
		}
		row(b, "Client", s.Client.Verdict)
	}
	if s.ClientReads != nil {
		row(b, "Token clock", ClockLine(s.ClientReads))
	}
	if s.Connections != nil {
		row(b, "Connections", ConnectionsLine(s.Connections))
	}
	if len(s.Hints) == 0 {
		return
	}
	fmt.Fprintf(b, "\nHINTS (%d)\n", len(s.Hints))
	for _, h := range s.Hints {
		fmt.Fprintf(b, "  * %s\n", h.Message)
	}
}

// writeChains shows each chain or graph class: its end-to-end latency,
// its calls and tokens per task and task goodput, and, per step (node),
// its latency, failures and share of the task's time.
func writeChains(b *bytes.Buffer, s *record.Summary) {
	names := make([]string, 0, len(s.Chains))
	for name := range s.Chains {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := s.Chains[name]
		fmt.Fprintf(b, "\nChain %s: %d chains, %d failed, E2E p50 %s p99 %s ms\n", name, c.Chains, c.Failed,
			formatMS(c.E2E.P50), formatMS(c.E2E.P99))
		fmt.Fprintf(b, "  per task: %s\n", taskFigures(c))
		fmt.Fprintf(b, "  %-16s %8s %8s %10s %10s %8s\n", "step", "started", "failed", "p50 ms", "p99 ms", "share")
		for _, st := range c.Steps {
			fmt.Fprintf(b, "  %-16s %8d %8d %10s %10s %7.1f%%%s\n", st.Name, st.Started, st.Failed,
				formatMS(st.Latency.P50), formatMS(st.Latency.P99), 100*st.ShareOfE2E, skippedNote(st))
		}
	}
}

// taskFigures is a chain or graph class's per-task line: calls and tokens
// per successful task (p50/p90/p99) and, under an SLO, task goodput.
func taskFigures(c *record.ChainSummary) string {
	line := fmt.Sprintf("calls p50/p90/p99 %s/%s/%s, tokens %s/%s/%s",
		formatCount(c.CallsPerTask.P50), formatCount(c.CallsPerTask.P90), formatCount(c.CallsPerTask.P99),
		formatCount(c.TokensPerTask.P50), formatCount(c.TokensPerTask.P90), formatCount(c.TokensPerTask.P99))
	if g := c.Goodput; g != nil {
		line += fmt.Sprintf(", goodput %.2f tasks/s (%.1f%% with every model call within the SLO)", g.TasksPerS, 100*g.Attainment)
	}
	return line
}

// formatCount prints a per-task count as the histogram gave it.
func formatCount(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// skippedNote flags a tool node skipped in some tasks.
func skippedNote(st record.ChainStepSummary) string {
	if st.Skipped == 0 {
		return ""
	}
	return fmt.Sprintf("  (%d skipped: no tool call asked)", st.Skipped)
}
