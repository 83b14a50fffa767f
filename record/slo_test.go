package record

import (
	"strings"
	"testing"
)

// TestTPOTUS checks the one TPOT every figure, SLO and export uses.
func TestTPOTUS(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    Result
		want int64
		ok   bool
	}{
		// docs/metrics.md's example: E2E 1 100 ms, TTFT 100 ms, 101 tokens → 10 ms.
		{"worked example", streamed(1000, []int64{100_000}, 1_100_000, 101), 10_000, true},
		// 1 999 µs over 2 gaps is 999.5 µs: rounded to 1 000, where the
		// copies in experiment (goodput, capacity) truncated to 999.
		{"rounds half up", streamed(1000, []int64{1_000}, 2_999, 3), 1_000, true},
		// 1 998 µs over 3 gaps is 666 µs; 2 000 over 3 is 666.67 → 667.
		{"rounds to nearest", streamed(1000, []int64{1_000}, 3_000, 4), 667, true},
		// One token has no gap to divide by.
		{"one token", streamed(1000, []int64{1_000}, 3_000, 1), 0, false},
		// A non-streamed reply's first token is its end: no TPOT.
		{"not streamed", withRes(aggBase, func(r *Result) { r.Stream = false }), 0, false},
		// A stream without a content event has no TTFT to start from.
		{"no content", withRes(aggBase, func(r *Result) { r.TTFTUS = 0 }), 0, false},
	}
	for _, tt := range tests {
		got, ok := TPOTUS(&tt.r)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: TPOTUS = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// TestSLOJudge checks which bounds apply to a request: the capacity
// search counts only requests an objective could judge.
func TestSLOJudge(t *testing.T) {
	t.Parallel()
	// aggBase: TTFT 100 ms, E2E 150 ms, 3 tokens → TPOT 25 ms.
	nonStream := withRes(aggBase, func(r *Result) { r.Stream, r.EventsUS, r.TTFTUS = false, nil, 0 })
	tests := []struct {
		name        string
		slo         SLO
		r           Result
		met, judged bool
	}{
		// The zero SLO judges nothing and every success meets it.
		{"no bounds", SLO{}, aggBase, true, false},
		// A failure is judged on any objective and misses it.
		{"failure", SLO{TPOTMs: 30}, withRes(aggBase, func(r *Result) { r.Error = ErrHTTP5xx }), false, true},
		// A non-streamed reply is judged on TTFT by its E2E (150 ms), so it
		// misses ttft 120 ms: the old capacity tally skipped it and the
		// old sweep goodput passed it (its TTFT read 0).
		{"non-stream ttft", SLO{TTFTMs: 120, Share: 0.99}, nonStream, false, true},
		// A TPOT-only objective cannot judge a reply without a TPOT.
		{"non-stream tpot", SLO{TPOTMs: 1, Share: 0.99}, nonStream, true, false},
		// A streamed reply's TPOT (25 ms) meets tpot 25 ms: bounds are inclusive.
		{"tpot at bound", SLO{TPOTMs: 25}, aggBase, true, true},
	}
	for _, tt := range tests {
		met, judged := tt.slo.Judge(&tt.r)
		if met != tt.met || judged != tt.judged {
			t.Errorf("%s: Judge = %v, %v; want %v, %v", tt.name, met, judged, tt.met, tt.judged)
		}
	}
}

// TestParseSLO checks the capacity objective syntax.
func TestParseSLO(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want SLO
		text string // String() of the result
		err  string
	}{
		// The usual form: a p99 is a share of 0.99.
		{"ttft.p99<=2s", SLO{TTFTMs: 2000, Share: 0.99}, "TTFT p99 ≤ 2s", ""},
		// Spaces, upper case and a bare "<" are accepted.
		{" TPOT.p90 < 100ms ", SLO{TPOTMs: 100, Share: 0.9}, "TPOT p90 ≤ 100ms", ""},
		// The highest reported percentile.
		{"e2e.p999<=30s", SLO{E2EMs: 30000, Share: 0.999}, "E2E p999 ≤ 30s", ""},
		// ITL is per gap, not per request: not an SLO metric here.
		{"itl.p99<=50ms", SLO{}, "", "METRIC ttft, ttfo, tpot or e2e"},
		// Only reported percentiles.
		{"ttft.p42<=1s", SLO{}, "", "unknown percentile"},
		// A bound must be a duration.
		{"e2e.p50<=fast", SLO{}, "", "not a positive duration"},
		{"e2e.p50<=0s", SLO{}, "", "not a positive duration"},
		// One language with thresholds: the summary.json spelling and a
		// bare number of ms bound the same figure.
		{"ttft_ms.p99 <= 2000", SLO{TTFTMs: 2000, Share: 0.99}, "TTFT p99 ≤ 2s", ""},
		{"tpot.p95<=80", SLO{TPOTMs: 80, Share: 0.95}, "TPOT p95 ≤ 80ms", ""},
		// A lower bound is no objective.
		{"ttft.p99>=2s", SLO{}, "", "METRIC ttft, ttfo, tpot or e2e"},
		// A class prefix judges one class's requests only.
		{"chat:ttft.p90<=500ms", SLO{TTFTMs: 500, Share: 0.9, Class: "chat"}, "chat: TTFT p90 ≤ 500ms", ""},
		{" :ttft.p90<=500ms", SLO{}, "", "empty class"},
		{"chat:ttft.p90<=soon", SLO{}, "", "not a positive duration"},
	}
	for _, tt := range tests {
		got, err := ParseSLO(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want || got.String() != tt.text {
			t.Errorf("%q = %+v (%q), %v; want %+v (%q)", tt.in, got, got.String(), err, tt.want, tt.text)
		}
		// Exprs writes back what ParseSLO reads.
		for _, e := range got.Exprs() {
			if back, err := ParseSLO(e); err != nil || back != got {
				t.Errorf("%q: Exprs %q reads back as %+v, %v", tt.in, e, back, err)
			}
		}
	}
}

// An objective of one class neither meets nor misses another class's
// requests: they are not judged, so they do not dilute its share.
func TestSLOClassJudgesItsOwn(t *testing.T) {
	t.Parallel()
	o := SLO{TTFTMs: 100, Share: 0.9, Class: "chat"}
	slow := &Result{Class: "chat", Stream: true, TTFTUS: 200_000, E2EUS: 300_000}
	other := &Result{Class: "batch", Stream: true, TTFTUS: 200_000, E2EUS: 300_000}
	if met, judged := o.Judge(slow); met || !judged {
		t.Errorf("chat request over the bound: met %v judged %v, want a judged miss", met, judged)
	}
	if met, judged := o.Judge(other); met || judged {
		t.Errorf("batch request: met %v judged %v, want not judged", met, judged)
	}
}

// TestSLOString checks how a per-request objective reads.
func TestSLOString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		slo  SLO
		want string
	}{
		// No bound at all.
		{SLO{}, "no bound"},
		// Several bounds, in TTFT, TPOT, E2E order, without a percentile.
		{SLO{TTFTMs: 2000, E2EMs: 60000, TPOTMs: 50}, "TTFT ≤ 2s, TPOT ≤ 50ms, E2E ≤ 1m0s"},
		// A share that is not a reported percentile reads as a percentage.
		{SLO{TTFTMs: 500, Share: 0.8}, "TTFT 80% ≤ 500ms"},
	}
	for _, tt := range tests {
		if got := tt.slo.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.slo, got, tt.want)
		}
	}
}

// TestSLOTimeToFirstAnswer: a TTFO bound holds a reasoning reply to its
// first answer token, not its first reasoning token; a reply that did not
// reason to its TTFT (a non-streamed one to its E2E); a reasoning reply
// cut off before it answered misses. "ttfo.p90<=4s" reads and writes back.
func TestSLOTimeToFirstAnswer(t *testing.T) {
	t.Parallel()
	o := SLO{TTFOMs: 1000}
	for _, tt := range []struct {
		name string
		r    *Result
		met  bool
	}{
		{"reasoned, answered at 0.8 s", &Result{Stream: true, TTFTUS: 100_000, TTFRUS: 100_000, TTFOUS: 800_000, ReasoningEvents: 20, E2EUS: 2e6}, true},
		{"reasoned, answered at 1.5 s", &Result{Stream: true, TTFTUS: 100_000, TTFRUS: 100_000, TTFOUS: 1_500_000, ReasoningEvents: 40, E2EUS: 2e6}, false},
		{"reasoned, never answered", &Result{Stream: true, TTFTUS: 100_000, TTFRUS: 100_000, ReasoningEvents: 64, E2EUS: 2e6, FinishReason: "length"}, false},
		{"no reasoning, TTFT 0.3 s", &Result{Stream: true, TTFTUS: 300_000, E2EUS: 2e6}, true},
		{"not streamed, E2E 1.2 s", &Result{E2EUS: 1_200_000}, false},
	} {
		if met, judged := o.Judge(tt.r); met != tt.met || !judged {
			t.Errorf("%s: met %v judged %v, want met %v", tt.name, met, judged, tt.met)
		}
	}
	got, err := ParseSLO("ttfo.p90<=4s")
	if err != nil || got != (SLO{TTFOMs: 4000, Share: 0.9}) || got.String() != "TTFO p90 ≤ 4s" {
		t.Errorf("ParseSLO(ttfo.p90<=4s) = %+v (%q), %v", got, got.String(), err)
	}
	if b, err := ParseBounds([]string{"ttfo <= 2s, ttft <= 500ms"}); err != nil || b.TTFOMs != 2000 || b.TTFTMs != 500 {
		t.Errorf("ParseBounds: %+v, %v", b, err)
	}
}
