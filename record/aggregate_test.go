package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// streamed builds a successful closed-loop streamed request: events are
// offsets from send, TTFT is the first event, E2E the end.
func streamed(sendUS int64, events []int64, e2eUS int64, out int) Result {
	return Result{
		SendUS: sendUS, Stream: true, EventsUS: events, TTFTUS: events[0], E2EUS: e2eUS,
		OutputTokens: out, InputTokens: 10, TokenSource: TokensUsage,
	}
}

// withRes applies fn to a copy of r, for table rows that vary one field.
func withRes(r Result, fn func(*Result)) Result {
	fn(&r)
	return r
}

var closedInfo = RunInfo{Name: "t", Mode: ModeClosed, WarmupEndUS: 0, EndUS: 10e6}

// aggBase is a closed-loop streamed request: TTFT 100 ms, events at 100,
// 110 and 130 ms after send, E2E 150 ms, 3 output tokens from usage.
var aggBase = streamed(1000, []int64{100_000, 110_000, 130_000}, 150_000, 3)

// aggregateCases: summary figures, addressed by their summary.json path,
// worked out by hand.
var aggregateCases = []struct {
	name string
	info RunInfo
	recs []Result
	want map[string]any
}{{
	// TTFT = first event; ITL = gaps 10 and 20 ms; TPOT = (150−100)/(3−1) = 25 ms; E2E = 150 ms.
	name: "one streamed request",
	info: closedInfo,
	recs: []Result{aggBase},
	want: map[string]any{
		"metrics.ttft_ms.p50": 100.0, "metrics.ttft_ms.count": 1.0,
		"metrics.itl_ms.mean": 15.0, "metrics.itl_ms.min": 10.0, "metrics.itl_ms.max": 20.0,
		"metrics.itl_ms.count": 2.0, "metrics.itl_ms.stddev": 5.0,
		"metrics.tpot_ms.p50": 25.0, "metrics.e2e_ms.p99": 150.0, "metrics.e2e_ms.max": 150.0,
		"metrics.queue_delay_ms.count": 0.0, "requests.total": 1.0, "failure_rate": 0.0,
	},
}, {
	// A warm-up record is counted in total and warmup only: its 9 s E2E is in no statistic.
	name: "warm-up excluded",
	info: closedInfo,
	recs: []Result{aggBase, withRes(aggBase, func(r *Result) { r.Warmup, r.E2EUS, r.TTFTUS = true, 9e6, 8e6 })},
	want: map[string]any{
		"requests.total": 2.0, "requests.warmup": 1.0, "requests.succeeded": 1.0,
		"metrics.e2e_ms.max": 150.0, "metrics.ttft_ms.max": 100.0, "tokens.output_total": 3.0,
	},
}, {
	// A failure feeds failed_e2e_ms and errors only; failure rate = 1/(1+1).
	name: "failure kept out of success histograms",
	info: closedInfo,
	recs: []Result{aggBase, {SendUS: 5, E2EUS: 5e6, Error: ErrHTTP5xx, Status: 503, OutputTokens: 7}},
	want: map[string]any{
		"requests.failed": 1.0, "failure_rate": 0.5, "errors.http_5xx": 1.0,
		"failed_e2e_ms.max": 5000.0, "failed_e2e_ms.count": 1.0,
		"metrics.e2e_ms.count": 1.0, "metrics.e2e_ms.max": 150.0, "tokens.output_total": 3.0,
	},
}, {
	// Open loop: intended 0, sent at 20 ms, events 30 and 40 ms after send, so TTFT from
	// the intended time is 50 ms, E2E 70 ms; TPOT = (70−50)/(2−1) = 20 ms; queue delay 20 ms.
	name: "open-loop origin",
	info: RunInfo{Mode: ModeOpen, EndUS: 1e6},
	recs: []Result{{
		OpenLoop: true, IntendedUS: 0, SendUS: 20_000, QueueDelayUS: 20_000, Late: true,
		Stream: true, EventsUS: []int64{30_000, 40_000}, TTFTUS: 50_000, E2EUS: 70_000,
		OutputTokens: 2, TokenSource: TokensUsage,
	}},
	want: map[string]any{
		"metrics.ttft_ms.p50": 50.0, "metrics.itl_ms.p50": 10.0, "metrics.tpot_ms.p50": 20.0,
		"metrics.e2e_ms.p50": 70.0, "metrics.queue_delay_ms.p50": 20.0, "requests.late": 1.0,
	},
}, {
	// Window [10 s, 20 s] = 10 s; 5 successes sent at 11..15 s × 100 output
	// tokens, input from PromptTokensSent (50) since usage gave no prompt_tokens.
	name: "throughput over the window",
	info: RunInfo{WarmupEndUS: 10e6, MeasureEndUS: 20e6, EndUS: 20e6},
	recs: func() []Result {
		rs := repeat(5, withRes(aggBase, func(r *Result) { r.OutputTokens, r.InputTokens, r.PromptTokensSent = 100, 0, 50 }))
		for i := range rs {
			rs[i].SendUS = 11e6 + int64(i)*1e6
		}
		return rs
	}(),
	want: map[string]any{
		"window_s": 10.0, "throughput.requests_per_s": 0.5,
		"throughput.output_tokens_per_s": 50.0, "throughput.input_tokens_per_s": 25.0,
		"tokens.input_total": 250.0,
	},
}, {
	// Throughput is what was delivered inside [warm-up end, issuing stop]:
	// a warm-up request completing at 12 s counts (3 of its 4 token events
	// arrive after 10 s); a measured request draining until 24 s counts only
	// its 2 events before 20 s and not as a completed request. Window 10 s.
	name: "throughput counts deliveries inside the window",
	info: RunInfo{WarmupEndUS: 10e6, MeasureEndUS: 20e6, EndUS: 30e6},
	recs: []Result{
		{Warmup: true, SendUS: 9e6, Stream: true, EventsUS: []int64{500_000, 1_500_000, 2_500_000, 2_900_000},
			TTFTUS: 500_000, E2EUS: 3e6, OutputTokens: 4, InputTokens: 10, TokenSource: TokensUsage},
		{SendUS: 15e6, Stream: true, EventsUS: []int64{1e6, 2e6, 6e6, 8e6},
			TTFTUS: 1e6, E2EUS: 9e6, OutputTokens: 4, InputTokens: 10, TokenSource: TokensUsage},
	},
	want: map[string]any{
		"window_s": 10.0, "throughput.requests_per_s": 0.1,
		"throughput.output_tokens_per_s": 0.5, "throughput.input_tokens_per_s": 1.0,
		"requests.succeeded": 1.0, "metrics.e2e_ms.max": 9000.0,
	},
}, {
	// Load offered for only 0.5 s (a burst of requests): the window runs to
	// the last reply instead, drain included (and a warning says so).
	name: "short offered load includes the drain",
	info: RunInfo{MeasureEndUS: 500_000, EndUS: 2e6},
	recs: []Result{withRes(aggBase, func(r *Result) { r.E2EUS = 1_500_000 })},
	want: map[string]any{"window_s": 2.0, "throughput.requests_per_s": 0.5},
}, {
	// A killed run has no run_end: the window closes at the last completion (1 ms + 150 ms).
	name: "window end falls back to last completion",
	info: RunInfo{},
	recs: []Result{aggBase},
	want: map[string]any{"window_s": 0.151},
}, {
	// The server counted 110 prompt tokens where the client sent 100: +10%.
	name: "input token discrepancy",
	info: closedInfo,
	recs: repeat(2, withRes(aggBase, func(r *Result) { r.PromptTokensSent, r.InputTokens = 100, 110 })),
	want: map[string]any{"checks.input_tokens_compared": 2.0, "checks.input_tokens_diff": 0.1},
}, {
	// Server usage on every success.
	name: "token source usage",
	info: closedInfo,
	recs: []Result{aggBase, aggBase},
	want: map[string]any{"tokens.source": "usage", "tokens.usage_reported": 2.0, "tokens.counted": 0.0},
}, {
	// No usage anywhere; a counted warning follows.
	name: "token source counted",
	info: closedInfo,
	recs: []Result{withRes(aggBase, func(r *Result) { r.TokenSource = TokensCounted })},
	want: map[string]any{"tokens.source": "counted", "tokens.counted": 1.0},
}, {
	// One of each.
	name: "token source mixed",
	info: closedInfo,
	recs: []Result{aggBase, withRes(aggBase, func(r *Result) { r.TokenSource = "" })},
	want: map[string]any{"tokens.source": "mixed", "tokens.usage_reported": 1.0, "tokens.counted": 1.0},
}, {
	// Replies that are not generated text (images) have nothing to
	// count: no source, so no counted-tokens warning.
	name: "token source not generated",
	info: closedInfo,
	recs: []Result{withRes(aggBase, func(r *Result) { r.TokenSource, r.OutputTokens = TokensNone, 0 })},
	want: map[string]any{"tokens.source": "none", "tokens.usage_reported": 0.0, "tokens.counted": 0.0},
}, {
	// Only failures: no success to take a source from.
	name: "token source none",
	info: closedInfo,
	recs: []Result{{Error: ErrConnRefused}},
	want: map[string]any{"tokens.source": "none", "errors.connection_refused": 1.0, "failure_rate": 1.0},
}, {
	// ignore_eos asked with max_tokens 3: outputs 3, 2, 3 → 3 checked, 1 not honoured.
	name: "ignore_eos honour check",
	info: closedInfo,
	recs: []Result{
		withRes(aggBase, func(r *Result) { r.IgnoreEOS, r.MaxTokens = true, 3 }),
		withRes(aggBase, func(r *Result) { r.IgnoreEOS, r.MaxTokens, r.OutputTokens = true, 3, 2 }),
		withRes(aggBase, func(r *Result) { r.IgnoreEOS, r.MaxTokens = true, 3 }),
	},
	want: map[string]any{"checks.ignore_eos_checked": 3.0, "checks.ignore_eos_not_honoured": 1.0},
}, {
	// A non-streamed reply has one event at its end: only E2E is timed.
	name: "non-streamed request feeds E2E only",
	info: closedInfo,
	recs: []Result{{SendUS: 1, EventsUS: []int64{80_000}, TTFTUS: 80_000, E2EUS: 80_000, OutputTokens: 9}},
	want: map[string]any{
		"metrics.e2e_ms.p50": 80.0, "metrics.ttft_ms.count": 0.0,
		"metrics.tpot_ms.count": 0.0, "metrics.itl_ms.count": 0.0,
	},
}, {
	// One output token: TPOT has no denominator and is skipped; TTFT is still timed.
	name: "single-token reply has no TPOT",
	info: closedInfo,
	recs: []Result{streamed(0, []int64{40_000}, 41_000, 1)},
	want: map[string]any{"metrics.tpot_ms.count": 0.0, "metrics.ttft_ms.p50": 40.0},
}, {
	// Out-of-order events give a negative gap: clamped to 0 and counted, not a panic.
	name: "negative ITL clamped",
	info: closedInfo,
	recs: []Result{streamed(0, []int64{50_000, 40_000}, 60_000, 2)},
	want: map[string]any{"metrics.itl_ms.min": 0.0, "metrics.itl_ms.count": 1.0},
}}

// TestAggregateMath checks aggregateCases. Percentiles are compared to 0.1%
// (3 significant digits); every other figure exactly.
func TestAggregateMath(t *testing.T) {
	t.Parallel()
	for _, tt := range aggregateCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := flatten(t, summarize(tt.info, tt.recs))
			for path, want := range tt.want {
				checkPath(t, got, path, want)
			}
		})
	}
}

func repeat(n int, r Result) []Result {
	out := make([]Result, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func summarize(info RunInfo, recs []Result) *Summary {
	a := NewAggregate()
	for i := range recs {
		a.Add(&recs[i])
	}
	return a.Summary(info)
}

func checkPath(t *testing.T, got map[string]any, path string, want any) {
	t.Helper()
	v, ok := got[path]
	if !ok {
		t.Errorf("%s: missing from summary", path)
		return
	}
	wf, isNum := want.(float64)
	gf, _ := v.(float64)
	switch {
	case !isNum:
		if v != want {
			t.Errorf("%s = %v, want %v", path, v, want)
		}
	case isPercentile(path):
		if math.Abs(gf-wf) > wf*1e-3 {
			t.Errorf("%s = %v, want %v ±0.1%%", path, gf, wf)
		}
	case gf != wf:
		t.Errorf("%s = %v, want %v", path, gf, wf)
	}
}

func isPercentile(path string) bool {
	i := strings.LastIndex(path, ".p")
	return i >= 0 && !strings.Contains(path[i:], "per")
}

// flatten turns a summary into dotted summary.json paths → JSON values.
func flatten(t *testing.T, s *Summary) map[string]any {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("marshal summary: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("unmarshal summary: %v", err)
	}
	out := map[string]any{}
	flattenInto(out, "", m)
	return out
}

func flattenInto(out map[string]any, prefix string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		out[prefix] = v
		return
	}
	for k, sub := range m {
		if prefix != "" {
			k = prefix + "." + k
		}
		flattenInto(out, k, sub)
	}
}

// TestAggregateTally: the counts only the warnings read (analyze.Warnings)
// are tallied, and stay out of summary.json.
func TestAggregateTally(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		info RunInfo
		recs []Result
		want Tally
	}{{
		// Streamed usage-reporting successes over a real window: nothing to tally.
		name: "clean run", info: closedInfo, recs: repeat(3, streamed(0, []int64{1000, 2000}, 3000, 2)),
	}, {
		// A failed warm-up request counts; a measured failure does not.
		name: "warm-up failed", info: closedInfo,
		recs: []Result{{Error: ErrHTTP429}, {Warmup: true, Error: ErrHTTP429}},
		want: Tally{WarmupFailed: 1},
	}, {
		// A late open-loop, non-streamed reply with a 2 h E2E clamped to
		// 1 h, in a zero-length window: everything but the drain.
		name: "late, non-streamed, clamped", info: RunInfo{EndUS: 1e6, WarmupEndUS: 1e6},
		recs: []Result{{OpenLoop: true, Late: true, E2EUS: 7200e6, OutputTokens: 1, TokenSource: TokensUsage}},
		want: Tally{NonStreamed: 1, OpenLoop: 1, Clamped: 1},
	}, {
		// A whole reply that generates nothing (embeddings, rerank: no
		// max_tokens, no output tokens) could not have streamed.
		name: "tokenless", info: closedInfo,
		recs: []Result{{E2EUS: 5000, InputTokens: 300, TokenSource: TokensUsage}},
	}, {
		// Load offered for 0.5 s, replies until 1 s: the window runs to
		// the last reply, drain included.
		name: "drained", info: RunInfo{MeasureEndUS: 500_000, EndUS: 1e6},
		recs: []Result{streamed(0, []int64{1000}, 900_000, 1)},
		want: Tally{Drained: true},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := summarize(tt.info, tt.recs)
			if s.Tally != tt.want {
				t.Errorf("tally = %+v, want %+v", s.Tally, tt.want)
			}
			raw, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(raw, []byte("Tally")) || bytes.Contains(raw, []byte("NonStreamed")) {
				t.Errorf("summary.json carries the tally: %s", raw)
			}
		})
	}
}

// randomRecords makes a varied, reproducible run: streamed and not,
// failures, warm-up, open loop, counted tokens.
func randomRecords(n int, seed uint64) []Result {
	rng := rand.New(rand.NewPCG(seed, 1))
	recs := make([]Result, n)
	for i := range recs {
		events := make([]int64, 1+rng.IntN(40))
		at := int64(1000 + rng.IntN(200_000))
		for j := range events {
			events[j] = at
			at += int64(rng.IntN(50_000))
		}
		r := streamed(int64(i)*10_000, events, at+int64(rng.IntN(5000)), len(events))
		r.ID, r.Warmup, r.Stream = uint64(i), i < n/10, rng.IntN(8) != 0
		if rng.IntN(4) == 0 {
			r.TokenSource = TokensCounted
		}
		if rng.IntN(10) == 0 {
			r.Error, r.ErrorMsg = ErrorKinds[rng.IntN(len(ErrorKinds))], "boom"
		}
		if k := len(events) / 2; i%7 == 3 && k > 0 {
			// A reasoning reply (no draw from rng: the other records stay
			// as they were): its first half reasoning, an answer after.
			r.ReasoningEvents, r.TTFRUS, r.TTFOUS = k, r.TTFTUS, r.TTFTUS+events[k]-events[0]
			r.ChannelsInterleaved = i%14 == 10
		}
		recs[i] = r
	}
	return recs
}

// TestSummaryOrderIndependent: the same records added in any order give a
// byte-identical summary.json, so a rebuild always matches the live run.
func TestSummaryOrderIndependent(t *testing.T) {
	t.Parallel()
	recs := randomRecords(2000, 7)
	info := RunInfo{Name: "x", Started: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Mode: ModeClosed, WarmupEndUS: 2e6, EndUS: 20e6}
	want := encode(t, summarize(info, recs))
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	if got := encode(t, summarize(info, recs)); !bytes.Equal(got, want) {
		t.Errorf("shuffled records changed the summary:\n%s\nwant\n%s", got, want)
	}
}

func encode(t *testing.T, s *Summary) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := EncodeSummary(&buf, s); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestRunInfoApply rebuilds RunInfo from the annotations a run writes.
func TestRunInfoApply(t *testing.T) {
	t.Parallel()
	events := []Event{
		{TimeUS: 0, Kind: EventRunStart, Message: "2026-05-01T10:00:00.5Z"},
		{TimeUS: 2e6, Kind: EventWarmupEnd},
		{TimeUS: 9e6, Kind: EventInterrupted, Message: "SIGTERM"},
		{TimeUS: 9e6, Kind: EventMeasureEnd},
		{TimeUS: 11e6, Kind: EventRunEnd},
	}
	var ri RunInfo
	for i := range events {
		ri.Apply(&events[i])
	}
	want := RunInfo{Started: time.Date(2026, 5, 1, 10, 0, 0, 5e8, time.UTC), WarmupEndUS: 2e6, MeasureEndUS: 9e6, EndUS: 11e6, Interrupted: true}
	if ri != want {
		t.Errorf("RunInfo = %+v, want %+v", ri, want)
	}
}

// TestRunning reports live counts and TTFT percentiles of measured records.
func TestRunning(t *testing.T) {
	t.Parallel()
	a := NewAggregate()
	// TTFTs 10 µs … 1000 µs: below 2048 µs the histogram is exact.
	for i := 1; i <= 100; i++ {
		r := streamed(0, []int64{int64(i) * 10}, int64(i)*10+5, 4)
		a.Add(&r)
	}
	a.Add(&Result{Error: ErrTLS})
	a.Add(&Result{Warmup: true})
	a.Add(&Result{OpenLoop: true, Late: true, Error: ErrTLS})
	got := a.Running()
	want := Running{Succeeded: 100, Failed: 2, Warmup: 1, OutputTokens: 400, Late: 1, TTFTP50: 500 * time.Microsecond, TTFTP99: 990 * time.Microsecond}
	if got != want {
		t.Errorf("Running = %+v, want %+v", got, want)
	}
}

func BenchmarkAggregateAdd(b *testing.B) {
	events := make([]int64, 128)
	for i := range events {
		events[i] = int64(100_000 + i*20_000 + i%7*300)
	}
	r := streamed(0, events, events[127]+1000, 128)
	a := NewAggregate()
	b.ReportAllocs()
	for b.Loop() {
		a.Add(&r)
	}
}

func ExampleAggregate() {
	agg := NewAggregate()
	// Two streamed requests and one that the server refused.
	for _, r := range []Result{
		{SendUS: 0, Stream: true, EventsUS: []int64{80_000, 100_000, 120_000}, TTFTUS: 80_000, E2EUS: 130_000, OutputTokens: 3, TokenSource: TokensUsage},
		{SendUS: 500_000, Stream: true, EventsUS: []int64{90_000, 95_000}, TTFTUS: 90_000, E2EUS: 100_000, OutputTokens: 2, TokenSource: TokensUsage},
		{SendUS: 700_000, E2EUS: 2_000, Error: ErrHTTP429, Status: 429},
	} {
		agg.Add(&r)
	}
	s := agg.Summary(RunInfo{Name: "demo", Mode: ModeClosed, EndUS: 1_000_000})
	fmt.Printf("succeeded %d, failed %d, errors %v\n", s.Requests.Succeeded, s.Requests.Failed, s.Errors)
	fmt.Printf("TTFT max %.0f ms, TPOT max %.0f ms, %.1f output tok/s\n",
		s.Metrics.TTFT.Max, s.Metrics.TPOT.Max, s.Throughput.OutputTokensPerS)
	// Output:
	// succeeded 2, failed 1, errors map[http_429:1]
	// TTFT max 90 ms, TPOT max 25 ms, 5.0 output tok/s
}
