package report

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/internal/golden"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// stats builds a distribution whose percentiles climb from p50.
func stats(n int64, p50 float64) record.Stats {
	return record.Stats{Count: n, Mean: p50 * 1.1, Stddev: p50 / 4, Min: p50 / 2, P50: p50,
		P90: p50 * 1.5, P95: p50 * 1.8, P99: p50 * 2.5, P999: p50 * 4, Max: p50 * 6}
}

var started = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// summaryCases are the summaries rendered against testdata/<name>.golden.
var summaryCases = []struct {
	name string
	s    *record.Summary
}{{
	// A healthy closed-loop run: every latency row filled, precisions from
	// sub-millisecond ITL to multi-second E2E, errors in taxonomy order.
	name: "closed",
	s: &record.Summary{
		SchemaVersion: 1, Name: "qwen-32u", Started: started, Mode: record.ModeClosed, WindowS: 120,
		Requests:    record.Requests{Total: 1040, Succeeded: 990, Failed: 10, Warmup: 40},
		FailureRate: 0.01,
		Errors:      map[string]int64{"timeout_before_first_token": 3, "http_5xx": 7},
		Metrics: record.Metrics{
			TTFT: stats(990, 123.456), ITL: stats(125_000, 0.0523), TPOT: stats(990, 7.891),
			E2E: stats(990, 1234.5),
		},
		FailedE2E:  stats(10, 30_000),
		Throughput: record.Throughput{RequestsPerS: 8.25, OutputTokensPerS: 1056.04, InputTokensPerS: 4224.17},
		Tokens:     record.Tokens{Source: "usage", InputTotal: 506_880, OutputTotal: 126_720, UsageReported: 990},
		Checks:     record.Checks{IgnoreEOSChecked: 990},
		Warnings:   []string{"only 990 successful requests: P99.9 needs at least 1000 to mean much"},
	},
}, {
	// An interrupted open-loop run with queue delay, late starts, an unknown
	// error kind and several warnings.
	name: "open_interrupted",
	s: &record.Summary{
		SchemaVersion: 1, Name: "poisson-8", Started: started, Mode: record.ModeOpen, WindowS: 33.5, Interrupted: true,
		Requests:    record.Requests{Total: 268, Succeeded: 200, Failed: 60, Warmup: 8, Late: 12},
		FailureRate: 60.0 / 260,
		Errors:      map[string]int64{"http_429": 50, "canceled": 9, "future_kind": 1},
		Metrics: record.Metrics{
			TTFT: stats(200, 812), ITL: stats(25_000, 21.7), TPOT: stats(200, 22.4),
			E2E: stats(200, 3800), QueueDelay: stats(200, 0.4),
		},
		FailedE2E:  stats(60, 2.1),
		Throughput: record.Throughput{RequestsPerS: 5.97, OutputTokensPerS: 763.9, InputTokensPerS: 3055.6},
		Tokens:     record.Tokens{Source: "mixed", InputTotal: 102_400, OutputTotal: 25_600, ReasoningTotal: 512, UsageReported: 150, Counted: 50},
		Checks:     record.Checks{IgnoreEOSChecked: 200, IgnoreEOSNotHonoured: 50},
		Warnings: []string{
			"the run was interrupted: figures cover only the part that ran",
			"ignore_eos not honoured: 50 of 200 requests that asked for it returned output_tokens != max_tokens",
			"12 of 260 measured open-loop requests started late",
		},
	},
}, {
	// A mixed run: a table per class (bad input with its expected
	// rejections, a class name too long for its column) and per input
	// length, where the short requests' TTFT P99 shows the long ones' cost.
	name: "classes",
	s: &record.Summary{
		SchemaVersion: 1, Name: "mixed", Started: started, Mode: record.ModeOpen, WindowS: 60,
		Requests:    record.Requests{Total: 1000, Succeeded: 970, Failed: 5, ExpectedRejections: 25},
		FailureRate: 0.005,
		Errors:      map[string]int64{"http_5xx": 5},
		Metrics:     record.Metrics{TTFT: stats(970, 150), ITL: stats(90_000, 9.5), TPOT: stats(970, 10.2), E2E: stats(970, 1900)},
		FailedE2E:   stats(5, 3),
		Throughput:  record.Throughput{RequestsPerS: 16.2, OutputTokensPerS: 2100, InputTokensPerS: 9000},
		Tokens:      record.Tokens{Source: "usage", InputTotal: 540_000, OutputTotal: 126_000, UsageReported: 970},
		Classes: map[string]*record.Breakdown{
			"chat":                   {Requests: record.Requests{Total: 700, Succeeded: 700}, Metrics: record.Metrics{TTFT: stats(700, 90), TPOT: stats(700, 9), E2E: stats(700, 1200)}},
			"document":               {Requests: record.Requests{Total: 270, Succeeded: 270}, Metrics: record.Metrics{TTFT: stats(270, 640), TPOT: stats(270, 12), E2E: stats(270, 5200)}},
			"bad_input":              {Requests: record.Requests{Total: 30, ExpectedRejections: 25, Failed: 5}, FailureRate: 5.0 / 30},
			"a-very-long-class-name": {Requests: record.Requests{Total: 0}},
		},
		InputBuckets: []record.InputBucket{
			{Label: "<=256", MaxTokens: 256, Breakdown: record.Breakdown{Requests: record.Requests{Total: 720, Succeeded: 710, ExpectedRejections: 10}, Metrics: record.Metrics{TTFT: stats(710, 95), TPOT: stats(710, 9), E2E: stats(710, 1210)}}},
			{Label: "<=1024", MinTokens: 257, MaxTokens: 1024},
			{Label: "<=4096", MinTokens: 1025, MaxTokens: 4096, Breakdown: record.Breakdown{Requests: record.Requests{Total: 270, Succeeded: 260, Failed: 5, ExpectedRejections: 5}, FailureRate: 5.0 / 270, Metrics: record.Metrics{TTFT: stats(260, 640), TPOT: stats(260, 12), E2E: stats(260, 5200)}}},
			{Label: ">4096", MinTokens: 4097, Breakdown: record.Breakdown{Requests: record.Requests{Total: 10, ExpectedRejections: 10}}},
		},
	},
}, {
	// A reasoning model: the Reasoning rows under the latency table, with
	// a reply cut off while reasoning and one whose channels interleaved.
	name: "reasoning",
	s: &record.Summary{
		SchemaVersion: 1, Name: "r1-8u", Started: started, Mode: record.ModeClosed, WindowS: 60,
		Requests: record.Requests{Total: 400, Succeeded: 400},
		Errors:   map[string]int64{},
		Metrics: record.Metrics{
			TTFT: stats(400, 95), ITL: stats(200_000, 10.2), TPOT: stats(400, 10.4), E2E: stats(400, 5300),
			TTFR: statsPtr(stats(400, 95)), TTFO: statsPtr(stats(398, 4100)), ReasoningPhase: statsPtr(stats(398, 4000)),
			ITLReasoning: statsPtr(stats(158_000, 10.0)), ITLAnswer: statsPtr(stats(41_000, 10.8)),
		},
		Throughput: record.Throughput{RequestsPerS: 6.67, OutputTokensPerS: 3333, InputTokensPerS: 853},
		Tokens:     record.Tokens{Source: "usage", InputTotal: 51_200, OutputTotal: 200_000, ReasoningTotal: 160_000, UsageReported: 400},
		Reasoning:  &record.ReasoningSummary{Requests: 400, Unanswered: 2, Interleaved: 1, ReasoningEvents: 160_000, AnswerEvents: 40_000},
	},
}, {
	// Nothing measured: dashes, not zeros, in the latency table.
	name: "empty",
	s: &record.Summary{
		SchemaVersion: 1, Name: "", Started: started, Mode: record.ModeClosed,
		Errors: map[string]int64{}, Tokens: record.Tokens{Source: "none"},
		Warnings: []string{"no measured requests: every figure is empty (is the warm-up as long as the run?)"},
	},
}}

// TestWriteSummaryGolden renders each case and compares it with its golden
// file; go test -update rewrites them for review in the diff.
func TestWriteSummaryGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range summaryCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			if err := WriteSummary(&buf, tc.s); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.name+".golden"), buf.Bytes())
		})
	}
}

// TestFormatMS pins the precision rules of latency cells.
func TestFormatMS(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ms   float64
		want string
	}{
		{0, "0"},            // an exact zero stays short
		{0.0523, "0.052"},   // sub-millisecond: microsecond resolution
		{7.891, "7.89"},     // single digits: two decimals
		{123.456, "123.5"},  // tens and hundreds: one decimal
		{30_000.4, "30000"}, // seconds and above: whole milliseconds
		{999.96, "1000.0"},  // rounding up crosses into the next width, still readable
	}
	for _, tt := range tests {
		if got := formatMS(tt.ms); got != tt.want {
			t.Errorf("formatMS(%v) = %q, want %q", tt.ms, got, tt.want)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWriteErrors: a failing writer is reported, not swallowed.
func TestWriteErrors(t *testing.T) {
	t.Parallel()
	if err := WriteSummary(failWriter{}, summaryCases[0].s); err == nil {
		t.Error("WriteSummary to a failing writer: no error")
	}
	if err := WriteJSON(failWriter{}, summaryCases[0].s); err == nil {
		t.Error("WriteJSON to a failing writer: no error")
	}
}

// TestWriteJSON: --output json prints exactly summary.json's bytes.
func TestWriteJSON(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "summary.json")
	s := summaryCases[1].s
	if err := rundir.WriteSummary(path, s); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, s); err != nil {
		t.Fatal(err)
	}
	file, _ := os.ReadFile(path)
	if !bytes.Equal(buf.Bytes(), file) {
		t.Errorf("WriteJSON differs from summary.json:\n%s\nvs\n%s", buf.Bytes(), file)
	}
	if !bytes.Contains(file, []byte("\n  \"requests\": {\n    \"total\": 268,")) {
		t.Errorf("not indented two spaces per level:\n%s", file)
	}
}

func TestWriteSummaryServerTime(t *testing.T) {
	s := &record.Summary{ServerTime: &record.ServerTimeSummary{Requests: 3,
		PrefillMS: stats(3, 20), DecodeMS: stats(3, 130), OutsideMS: stats(3, 8)}}
	var b bytes.Buffer
	if err := WriteSummary(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Server time (ms)", "Prefill", "Decode", "Outside server"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary table lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Queue ") {
			t.Errorf("a server queue row without a queue figure: %q", line)
		}
	}
}

// TestWriteSummaryPrefixReuse: a run that asked for prefix reuse shows
// the share asked beside the share served; one that did not, no row.
func TestWriteSummaryPrefixReuse(t *testing.T) {
	t.Parallel()
	s := &record.Summary{PrefixReuse: &record.PrefixReuse{Requests: 60, RequestedShare: 0.62, AchievedShare: 0.583, CachedRequests: 37}}
	var b bytes.Buffer
	if err := WriteSummary(&b, s); err != nil {
		t.Fatal(err)
	}
	want := "Prefix reuse  asked 62.0 % of input tokens   served 58.3 % (server's cached tokens; 37 of 60 requests had some)"
	if !strings.Contains(b.String(), want) {
		t.Errorf("summary table lacks %q:\n%s", want, b.String())
	}
	// From the server's counters when no reply said.
	b.Reset()
	s.PrefixReuse.CachedRequests, s.PrefixReuse.AchievedFrom = 0, "counters"
	if err := WriteSummary(&b, s); err != nil {
		t.Fatal(err)
	}
	want = "served 58.3 % (the server's prefix-cache counters over the measured window; no reply of 60 reported cached tokens)"
	if !strings.Contains(b.String(), want) {
		t.Errorf("summary table lacks %q:\n%s", want, b.String())
	}
	b.Reset()
	if err := WriteSummary(&b, &record.Summary{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Prefix reuse") {
		t.Errorf("a run that asked for no reuse shows a row:\n%s", b.String())
	}
}

// TestWriteSummaryTokenless: a run that sent no prompt and got no text (a
// classifier behind the templated API) prints requests/s alone: no
// "0.0 output tok/s", no tokens row.
func TestWriteSummaryTokenless(t *testing.T) {
	t.Parallel()
	s := &record.Summary{Requests: record.Requests{Total: 12, Succeeded: 12}, Tokens: record.Tokens{Source: record.SourceNone},
		Throughput: record.Throughput{RequestsPerS: 30}}
	var b bytes.Buffer
	if err := WriteSummary(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "30.00 req/s   (no tokens") || strings.Contains(out, "tok/s") || strings.Contains(out, "\nTokens ") {
		t.Errorf("a run without tokens shows token figures:\n%s", out)
	}
}

func statsPtr(st record.Stats) *record.Stats { return &st }
