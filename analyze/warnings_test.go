package analyze

import (
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// streamed builds a successful closed-loop streamed request: events are
// offsets from send, TTFT is the first event, E2E the end.
func streamed(events []int64, e2eUS int64, out int) record.Result {
	return record.Result{Stream: true, EventsUS: events, TTFTUS: events[0], E2EUS: e2eUS,
		OutputTokens: out, InputTokens: 10, TokenSource: record.TokensUsage}
}

// withRes applies fn to a copy of r, for table rows that vary one field.
func withRes(r record.Result, fn func(*record.Result)) record.Result {
	fn(&r)
	return r
}

func repeat(n int, r record.Result) []record.Result {
	return slices.Repeat([]record.Result{r}, n)
}

// summarize is the aggregate's summary of recs, before any verdict.
func summarize(info record.RunInfo, recs []record.Result) *record.Summary {
	a := record.NewAggregate()
	for i := range recs {
		a.Add(&recs[i])
	}
	return a.Summary(info)
}

var closedInfo = record.RunInfo{Name: "t", Mode: record.ModeClosed, EndUS: 10e6}

// TestWarnings checks which warnings a run's figures earn, in order.
func TestWarnings(t *testing.T) {
	t.Parallel()
	ok := streamed([]int64{1000, 2000}, 3000, 2)
	tests := []struct {
		name string
		info record.RunInfo
		recs []record.Result
		soak *record.Soak
		want []string // prefixes of the expected warnings, in order
	}{{
		// 300 usage-reporting successes over a real window back P99
		// (299 needed): only the P99.9 sample-size note.
		name: "clean run", info: closedInfo, recs: repeat(300, ok),
		want: []string{"only 300 successful requests: P99.9 needs at least 2995 to be backed at 95% confidence"},
	}, {
		// 150 successes back P95 but not P99: both tail percentiles are named.
		name: "below P99", info: closedInfo, recs: repeat(150, ok),
		want: []string{"only 150 successful requests: P99 needs at least 299 and P99.9 at least 2995 to be backed at 95% confidence"},
	}, {
		// Interrupted, few samples, counted tokens, ignore_eos off, in that order.
		name: "several at once",
		info: record.RunInfo{EndUS: 1e6, Interrupted: true},
		recs: []record.Result{withRes(ok, func(r *record.Result) { r.TokenSource, r.IgnoreEOS, r.MaxTokens = record.TokensCounted, true, 5 })},
		want: []string{"the run was interrupted", "only 1 successful requests: P99 ", "output tokens of 1 of 1", "ignore_eos not honoured: 1 of 1"},
	}, {
		// Nothing measured at all: one warning says so and nothing else is claimed.
		name: "only warm-up", info: closedInfo, recs: []record.Result{withRes(ok, func(r *record.Result) { r.Warmup = true })},
		want: []string{"no measured requests"},
	}, {
		// Failures only, plus a failed warm-up request.
		name: "all failed",
		info: closedInfo,
		recs: []record.Result{{Error: record.ErrHTTP429}, {Warmup: true, Error: record.ErrHTTP429}},
		want: []string{"no request succeeded", "1 of 1 warm-up requests failed"},
	}, {
		// Late open-loop start, a non-streamed reply and a 2 h E2E clamped to 1 h.
		name: "late, non-streamed, clamped",
		info: record.RunInfo{EndUS: 1e6, WarmupEndUS: 1e6},
		recs: []record.Result{{OpenLoop: true, Late: true, E2EUS: 7200e6, OutputTokens: 1, TokenSource: record.TokensUsage}},
		want: []string{"the measured window has no length", "only 1 successful", "1 successful requests were not streamed", "1 of 1 measured open-loop requests started late", "1 latency values"},
	}, {
		// Load offered for 0.5 s: throughput includes the drain, said last.
		name: "drained",
		info: record.RunInfo{MeasureEndUS: 500_000, EndUS: 1e6},
		recs: []record.Result{streamed([]int64{1000}, 900_000, 1)},
		want: []string{"only 1 successful", "throughput is measured up to the last reply, drain included"},
	}, {
		// The server counted 20% more prompt tokens than the client sent, at every length: the tokenizer.
		name: "tokenizer",
		info: closedInfo,
		recs: prompts(ok, [][2]int{{12, 10}, {120, 100}, {1200, 1000}}),
		want: []string{"the server counted +20.0% input tokens compared with the client's tokenizer over 2997 requests, growing"},
	}, {
		// A constant +10 per request (Llama-3's chat template) over short prompts is 20% but no tokenizer error.
		name: "template offset",
		info: closedInfo,
		recs: prompts(ok, [][2]int{{40, 30}, {60, 50}, {80, 70}}),
		want: []string{"the server counted a constant +10 tokens per request beside the client's count over 2997 requests (+20.0%"},
	}, {
		// +10 on long prompts: under 5%, nothing to say.
		name: "small template offset",
		info: closedInfo,
		recs: prompts(ok, [][2]int{{1010, 1000}, {2010, 2000}, {3010, 3000}}),
	}, {
		// Prompts of 3000 and 6000 cut to 4096, short ones untouched (−33.8% overall would read as a tokenizer gap).
		name: "truncated",
		info: closedInfo,
		recs: prompts(ok, [][2]int{{4096, 6000}, {4096, 8000}, {500, 500}}),
		want: []string{"the server cut 1998 of 2997 prompts to 4096 tokens (the client sent up to 8000)"},
	}, {
		// A server that ignores max_tokens: more output than asked.
		name: "max_tokens ignored",
		info: closedInfo,
		recs: repeat(2995, withRes(ok, func(r *record.Result) { r.MaxTokens, r.OutputTokens = 1, 2 })),
		want: []string{"max_tokens ignored: 2995 of 2995 requests got more output tokens"},
	}, {
		// Bad input that the server accepted is left out of the checks: its prompts are meant to be odd.
		name: "bad input left out",
		info: closedInfo,
		recs: repeat(2995, withRes(ok, func(r *record.Result) {
			r.Expect, r.InputTokens, r.PromptTokensSent, r.MaxTokens, r.OutputTokens = record.ExpectRejection, 5000, 1, 1, 2
		})),
	}, {
		// A soak too short to test a quantile warns with the drift
		// verdict's words; a tested one, stable or not, does not.
		name: "soak too short for P99",
		info: closedInfo,
		recs: repeat(2995, ok),
		soak: &record.Soak{Drift: []record.Drift{{Metric: "P50 TTFT", Tested: true, Verdict: "P50 TTFT: no significant trend"},
			{Metric: "P99 TTFT", Verdict: "P99 TTFT drift not tested: 780 values over 1m30s fill 2 windows"}}},
		want: []string{"P99 TTFT drift not tested: 780 values over 1m30s fill 2 windows"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := summarize(tt.info, tt.recs)
			s.Soak = tt.soak
			got := Warnings(s, Criteria{})
			if len(got) != len(tt.want) {
				t.Fatalf("got %d warnings %q, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("warning %d = %q, want prefix %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestSampleWarningMatchesBacked: the sample-size warning and validity's
// percentile backing are one rule: at every edge and confidence, the
// warning names P99 exactly when Backed stops below p99, and P99.9 exactly
// when it stops below p999.
func TestSampleWarningMatchesBacked(t *testing.T) {
	t.Parallel()
	// 95% (the default): P99 needs 299, P99.9 2995; 99%: 459 and 4603.
	edges := []int64{1, 58, 59, 298, 299, 300, 458, 459, 2994, 2995, 4602, 4603, 10_000}
	for _, c := range []float64{0.95, 0.99} {
		for _, n := range edges {
			msg, backed := sampleWarning(n, c), Backed(n, c)
			p99Named := strings.Contains(msg, "P99 needs")
			p999Named := strings.Contains(msg, "P99.9")
			if p99Named != (backed != "p99" && backed != "p999") || p999Named != (backed != "p999") {
				t.Errorf("n=%d at %.0f%%: warning %q, but Backed says %s", n, 100*c, msg, backed)
			}
		}
	}
	// No success: the "no request succeeded" warning speaks instead.
	if msg := sampleWarning(0, 0.95); msg != "" {
		t.Errorf("n=0: warning %q", msg)
	}
	// The numbers the warning states are MinSamples'.
	if got, want := sampleWarning(300, 0.99), "only 300 successful requests: P99 needs at least 459 and P99.9 at least 4603 to be backed at 99% confidence"; got != want {
		t.Errorf("warning %q, want %q", got, want)
	}
}

// prompts gives 999 copies of r per {server, client} prompt-token pair.
func prompts(r record.Result, pairs [][2]int) []record.Result {
	var out []record.Result
	for _, p := range pairs {
		out = append(out, repeat(999, withRes(r, func(r *record.Result) { r.InputTokens, r.PromptTokensSent = p[0], p[1] }))...)
	}
	return out
}

// TestSpansWarning: each side of the OTLP receiver's two warnings.
func TestSpansWarning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string // what the row proves
		sp        *record.SpansSummary
		succeeded int64
		want      string // prefix; "" for none
	}{
		{"not listening: nothing to say", nil, 10, ""},
		{"listening, successes, no span", &record.SpansSummary{}, 10, "listened for OTLP spans but none came"},
		{"only the probe's span came: still none of the run's", &record.SpansSummary{Received: 1, Probe: 1}, 10, "listened for OTLP spans but none came"},
		{"listening, nothing succeeded: no span was owed", &record.SpansSummary{}, 0, ""},
		{"every span joined", &record.SpansSummary{Received: 10, Joined: 10}, 10, ""},
		{"one stray span", &record.SpansSummary{Received: 11, Joined: 10, Unmatched: 1}, 10, "1 OTLP spans matched no record's trace id"},
	} {
		if got := spansWarning(tc.sp, tc.succeeded); !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
