package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// Text a hostile or broken target could put in a run's files.
const (
	plantedScript = `<script>window.pwned=1</script>`
	plantedAttr   = `"><img src=x onerror="window.pwned=2">`
)

var keepReport = flag.Bool("keep-report", false, "write the test report to $TEST_ARTIFACTS or the test's temp dir and log its path")

// fullInput is a two-minute run with a latency drift, a failure burst,
// thresholds, and target text planted in every field a target controls.
func fullInput() *HTMLInput {
	s := &record.Summary{SchemaVersion: 1, Name: "demo", Mode: record.ModeOpen, WindowS: 110,
		Started: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC), FailureRate: 0.015,
		Errors:   map[string]int64{"http_5xx": 30, plantedScript: 1},
		Warnings: []string{"only 42 successful requests " + plantedAttr},
		Thresholds: []record.ThresholdResult{
			{Expr: "ttft_ms.p99 < 2000", Metric: "metrics.ttft_ms.p99", Value: 812, Passed: true},
			{Expr: "error_rate < 0.01", Metric: "failure_rate", Value: 0.015},
			{Expr: "classes.short.ttft_ms.p95 < 300", Error: "no summary figure matches " + plantedScript},
		}}
	s.Requests = record.Requests{Total: 2100, Succeeded: 1970, Failed: 30, Warmup: 100}
	s.Metrics.TTFT = record.Stats{Count: 1970, Mean: 300, P50: 250, P90: 500, P95: 600, P99: 812, P999: 900, Max: 950}
	s.Throughput = record.Throughput{RequestsPerS: 17.9, OutputTokensPerS: 2290}
	s.Tokens.Source = record.SourceUsage
	s.Retries = &record.Retries{Requests: 2000, Attempts: 2300, Amplification: 1.15, Retried: 250, SucceededAfterRetry: 220,
		RetriedErrors: map[string]int64{"http_5xx": 300}, GaveUp: map[string]int64{"budget": 30}}
	s.Classes = map[string]*record.Breakdown{
		"chat":        {Requests: record.Requests{Succeeded: 1500}, Metrics: record.Metrics{TTFT: record.Stats{P50: 200, P99: 600}}, ServerTime: serverTime(1500, 1)},
		plantedScript: {Requests: record.Requests{Succeeded: 470, Failed: 30}, FailureRate: 0.06, ServerTime: serverTime(470, 4)},
	}
	s.ServerTime = serverTime(1970, 2)
	s.InputBuckets = []record.InputBucket{
		{Label: "<=256", Breakdown: record.Breakdown{Requests: record.Requests{Total: 1500, Succeeded: 1500}}},
		{Label: "<=1024", Breakdown: record.Breakdown{Requests: record.Requests{Total: 500, Succeeded: 470}}},
		{Label: ">4096"},
	}
	s.Client = &record.ClientTelemetry{CPUPctMax: 97, SchedLagP99MaxMS: 40, SaturatedSeconds: 12, Saturated: true,
		Verdict: "SATURATED for 12 s: CPU max 97% of its CPUs"}
	s.Hints = []record.Hint{{Rule: "memory_bound", Message: "memory bound: KV cache reached 97% " + plantedScript,
		Figures: map[string]float64{"kv_cache_usage_max": 0.97, "preemptions_per_s_max": 4}}}
	s.Server = &record.ServerTelemetry{Sources: []record.TelemetrySource{{Source: "http://127.0.0.1:8000/metrics", Kind: "vllm+dcgm", Samples: 120, Gaps: 5}}}
	in := &HTMLInput{Summary: s, Digest: NewDigest(), Telemetry: fullTelemetry(),
		Env: map[string]any{
			"client": map[string]any{"hostname": "bench-1", "cpus": 2.0},
			"target": map[string]any{"model": plantedScript, "url": "http://127.0.0.1:8000/v1?" + plantedAttr,
				"served": map[string]any{"models": []any{map[string]any{"id": "llama", "max_context": 4096.0}}}},
			"gpus": map[string]any{"backend": "nvml", "gpus": []any{map[string]any{"index": 0.0, "name": "NVIDIA H200",
				"memory_total_mib": 143771.0, "driver": "570.86", "cuda": "12.8", "uuid": "GPU-1"}}},
			"server_gpus": []any{map[string]any{"index": 0.0, "name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": -1.0}},
			"declared":    map[string]any{"framework": "vllm 0.6.3", "quantisation": plantedAttr},
		},
		Events: []record.Event{
			{TimeUS: 0, Kind: record.EventRunStart, Message: "2026-11-30T08:00:00Z"},
			{TimeUS: 10e6, Kind: record.EventWarmupEnd},
			{TimeUS: 30e6, Kind: record.EventNote, Message: "cache flushed " + plantedScript},
			{TimeUS: 50e6, Kind: "scrape_gap", Message: "http://127.0.0.1:8000/metrics: timeout"},
			{TimeUS: 61e6, Kind: record.EventFirstError, Message: "http_5xx: " + plantedScript + plantedAttr},
			{TimeUS: 61e6, Kind: "error_burst", Message: "9 failures in second 61"},
			{TimeUS: 120e6, Kind: record.EventMeasureEnd},
		}}
	for i := range 2100 {
		t := int64(i) * 57_000 // 120 s
		ttft := 150_000 + t/400 + int64(i%7)*20_000
		r := &record.Result{ID: uint64(i), SendUS: t, Stream: true, Warmup: t < 10e6, TTFTUS: ttft, E2EUS: ttft + 2_000_000,
			EventsUS: []int64{ttft, ttft + 15_000, ttft + 31_000, ttft + 80_000}, OutputTokens: 128,
			ErrorMsg: plantedScript}
		if i%70 == 0 {
			r.Error = record.ErrHTTP5xx
		}
		in.Digest.Add(r)
	}
	for sec := range int64(122) {
		w := record.Window{TS: sec, Completed: 18, Succeeded: 17, Failed: 1, OutputTokens: 17 * 128,
			TTFTP50MS: 250 + float64(sec), TTFTP99MS: 800 + 2*float64(sec), E2EP99MS: 2900}
		in.Series = append(in.Series, w)
	}
	return in
}

func render(t *testing.T, in *HTMLInput) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestHTMLEscapesTargetText: every field a target controls reaches the page
// as text, never as markup.
func TestHTMLEscapesTargetText(t *testing.T) {
	t.Parallel()
	page := render(t, fullInput())
	for _, bad := range []string{"<script>window.pwned", "<img src=x", `onerror="window`} {
		if strings.Contains(page, bad) {
			t.Errorf("report contains %q unescaped", bad)
		}
	}
	// The planted text is still shown, escaped, in the environment, events,
	// errors, warnings and threshold tables.
	if n := strings.Count(page, "&lt;script&gt;window.pwned=1&lt;/script&gt;"); n < 5 {
		t.Errorf("escaped script text appears %d times, want at least 5 (env, event, error kind, threshold, class)", n)
	}
	if !strings.Contains(page, "&#34;&gt;&lt;img src=x onerror=") {
		t.Errorf("escaped attribute text missing from the page")
	}
}

// TestHTMLSectionsFollowData: a section appears exactly when its data does.
func TestHTMLSectionsFollowData(t *testing.T) {
	t.Parallel()
	full := fullInput()
	bare := &HTMLInput{Summary: &record.Summary{SchemaVersion: 1, Name: "bare"}}
	all := []string{"diagnosis", "headline", "thresholds", "percentiles", "breakdown", "distributions", "heatmap", "timeline", "server", "client", "errors", "retries", "events", "environment"}
	tests := []struct {
		name string
		in   *HTMLInput
		want []string
	}{
		// Everything present: every section, in order.
		{"full", full, all},
		// A summary alone (no files beside it): only what the summary holds.
		{"summary only", bare, []string{"headline", "percentiles"}},
		// Records with no success: the digest is empty, so no distribution or heat map.
		{"empty digest", &HTMLInput{Summary: bare.Summary, Digest: NewDigest()}, []string{"headline", "percentiles"}},
	}
	for _, tt := range tests {
		page := render(t, tt.in)
		last := -1
		for _, id := range all {
			at := strings.Index(page, `<section id="`+id+`">`)
			wanted := strings.Contains(strings.Join(tt.want, " "), id)
			if (at >= 0) != wanted {
				t.Errorf("%s: section %s present=%v, want %v", tt.name, id, at >= 0, wanted)
			}
			if at >= 0 && at < last {
				t.Errorf("%s: section %s out of order", tt.name, id)
			}
			last = max(last, at)
		}
	}
}

// externalRef matches anything a browser would fetch: an element with a
// src or href, a stylesheet link, a CSS url() or @import.
var externalRef = regexp.MustCompile(`(?i)<[a-z]+[^>]*\s(src|href)\s*=\s*["']?[a-z]+:|<link\b|url\(|@import`)

// TestHTMLSelfContained: nothing in the page is fetched from elsewhere.
func TestHTMLSelfContained(t *testing.T) {
	t.Parallel()
	page := render(t, fullInput())
	if m := externalRef.FindString(page); m != "" {
		t.Errorf("report refers outside itself: %s", m)
	}
	if !strings.Contains(page, "uPlot") || strings.Count(page, "<script>") != 2 {
		t.Errorf("want the chart library and the report script inlined in two script elements")
	}
	if len(page) > 400_000 {
		t.Errorf("report is %d bytes; a two-minute run should be far lighter", len(page))
	}
}

func TestWriteHTMLNeedsSummary(t *testing.T) {
	t.Parallel()
	if err := WriteHTML(&bytes.Buffer{}, &HTMLInput{}); err == nil {
		t.Fatal("WriteHTML without a summary succeeded")
	}
}

// TestDownsample: long series fold into at most n points without losing
// counts or a latency spike.
func TestDownsample(t *testing.T) {
	t.Parallel()
	tests := []struct {
		windows, n, wantSpans int
	}{
		{windows: 100, n: 1200, wantSpans: 100},    // short run: one window per point
		{windows: 1200, n: 1200, wantSpans: 1200},  // exactly at the limit
		{windows: 1201, n: 1200, wantSpans: 601},   // one over: pairs
		{windows: 86400, n: 1200, wantSpans: 1200}, // a day: 72 windows per point
	}
	for _, tt := range tests {
		ws := make([]record.Window, tt.windows)
		for i := range ws {
			ws[i] = record.Window{TS: int64(i), Succeeded: 2, OutputTokens: 10, E2EP99MS: 100}
		}
		ws[tt.windows/2].E2EP99MS = 9000 // one spike
		got := downsample(ws, tt.n)
		if len(got) != tt.wantSpans {
			t.Errorf("%d windows: %d spans, want %d", tt.windows, len(got), tt.wantSpans)
		}
		var ok, spike float64
		for _, sp := range got {
			ok += sp.succeeded
			spike = max(spike, sp.e2eP99)
		}
		if ok != float64(2*tt.windows) || spike != 9000 {
			t.Errorf("%d windows: succeeded %v (want %d), max p99 %v (want 9000)", tt.windows, ok, 2*tt.windows, spike)
		}
	}
}

// TestDigestBounded: a ten-hour run still makes at most maxColumns heat-map
// columns, and every success is counted once.
func TestDigestBounded(t *testing.T) {
	t.Parallel()
	d := NewDigest()
	const n = 36_000
	for i := range n {
		d.Add(&record.Result{SendUS: int64(i) * 1e6, E2EUS: 5e5})
	}
	if len(d.e2eHeat.cols) > maxColumns {
		t.Errorf("%d columns, want at most %d", len(d.e2eHeat.cols), maxColumns)
	}
	var total int64
	for _, c := range d.e2eHeat.cols {
		for _, v := range c {
			total += v
		}
	}
	if total != n || d.e2e[binOf(5e5)] != n {
		t.Errorf("heat map holds %d, distribution %d; want %d each", total, d.e2e[binOf(5e5)], n)
	}
}

func TestBinOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		us   int64
		want int
	}{
		{us: -5, want: 0},                    // negative clamps to the first bin
		{us: 100, want: 0},                   // the first edge
		{us: 1000, want: 10},                 // 1 ms: one decade up
		{us: 1_000_000, want: 40},            // 1 s
		{us: 1 << 62, want: latencyBins - 1}, // absurd values land in the last bin
	}
	for _, tt := range tests {
		if got := binOf(tt.us); got != tt.want {
			t.Errorf("binOf(%d) = %d, want %d", tt.us, got, tt.want)
		}
	}
	if e := binEdgeMS(40); e < 999.9 || e > 1000.1 {
		t.Errorf("binEdgeMS(40) = %v, want 1000", e)
	}
}

func writeReportFile(t *testing.T, dir, name string, in *HTMLInput) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(render(t, in)), 0o644); err != nil {
		t.Fatal(err)
	}
	if *keepReport {
		t.Logf("report: %s", path)
	}
	return path
}

// TestHTMLShowsRetries: the retries section says the attempts, the
// amplification and why retrying stopped; the percentile table says "-"
// for a figure with no samples (no failure's E2E), as the terminal does,
// leaves out a closed loop's client queue (none is measured), and
// validity is said in plain words.
func TestHTMLShowsRetriesAndEmptyRows(t *testing.T) {
	t.Parallel()
	in := fullInput()
	in.Summary.Validity = &record.Validity{Valid: true, Percentiles: map[string]string{"ttft": "p99", "e2e": "p95"}}
	in.Summary.FailedE2E, in.Summary.Metrics.QueueDelay = record.Stats{}, record.Stats{}
	page := render(t, in)
	if strings.Contains(page, "Client queue") {
		t.Error("a closed loop's report shows a client queue row")
	}
	for _, want := range []string{"1.15×", "2300", "gave up because", "budget", "retried after",
		"<td>E2E (failed)</td><td>0</td><td>-</td>", "enough requests to trust TTFT percentiles up to P99, E2E percentiles up to P95"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// serverTime is a server_time whose phases grow with scale, the queue
// largest at the tail (a saturated server).
func serverTime(n int64, scale float64) *record.ServerTimeSummary {
	st := func(p50 float64) record.Stats {
		return record.Stats{Count: n, P50: p50 * scale, P90: 2 * p50 * scale, P99: 4 * p50 * scale, Max: 5 * p50 * scale}
	}
	q := st(30)
	return &record.ServerTimeSummary{Requests: n, QueueMS: &q, PrefillMS: st(20), DecodeMS: st(200), OutsideMS: st(3)}
}

// TestHTMLReasoningRows: the percentile section gains the reasoning table
// only when some request reasoned, as the terminal.
func TestHTMLReasoningRows(t *testing.T) {
	t.Parallel()
	plain := render(t, fullInput())
	if strings.Contains(plain, "TTFR") {
		t.Error("a run that did not reason shows reasoning rows")
	}
	in := fullInput()
	st := record.Stats{Count: 7, Mean: 4100, P50: 4000, P90: 5000, P95: 5500, P99: 6000, P999: 6000, Max: 6100}
	m := &in.Summary.Metrics
	m.TTFR, m.TTFO, m.ReasoningPhase, m.ITLReasoning, m.ITLAnswer = &st, &st, &st, &st, &st
	page := render(t, in)
	for _, want := range []string{"reasoning, milliseconds", "<td>TTFR</td><td>7</td>", "<td>TTFO</td>",
		"<td>Reasoning phase</td>", "<td>ITL reasoning</td>", "<td>ITL answer</td>", "first answer token"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
