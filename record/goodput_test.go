package record

import (
	"math"
	"testing"
)

// TestSLOMet checks which requests meet an objective, bound by bound.
func TestSLOMet(t *testing.T) {
	t.Parallel()
	// aggBase: TTFT 100 ms, E2E 150 ms, 3 tokens → TPOT 25 ms.
	nonStream := withRes(aggBase, func(r *Result) { r.Stream, r.EventsUS, r.TTFTUS = false, nil, 0 })
	tests := []struct {
		name string
		slo  SLO
		r    Result
		want bool
	}{
		// The zero SLO is met by every success.
		{"no bounds", SLO{}, aggBase, true},
		// Bounds are inclusive: TTFT 100 ms meets ttft_ms 100.
		{"ttft at bound", SLO{TTFTMs: 100}, aggBase, true},
		// TTFT 100 ms misses ttft_ms 99.
		{"ttft over", SLO{TTFTMs: 99}, aggBase, false},
		// TPOT 25 ms misses tpot_ms 20 though TTFT and E2E are fine.
		{"tpot over", SLO{TTFTMs: 1000, TPOTMs: 20, E2EMs: 1000}, aggBase, false},
		// E2E 150 ms misses e2e_ms 149.
		{"e2e over", SLO{E2EMs: 149}, aggBase, false},
		// A failure never meets an SLO, even the empty one.
		{"failure", SLO{}, withRes(aggBase, func(r *Result) { r.Error = ErrHTTP5xx }), false},
		// A non-streamed reply's TTFT is its E2E (150 ms): ttft_ms 120 is missed.
		{"non-stream ttft is e2e", SLO{TTFTMs: 120}, nonStream, false},
		// A non-streamed reply has no TPOT: a tight tpot_ms is not held against it.
		{"non-stream no tpot", SLO{TPOTMs: 1}, nonStream, true},
	}
	for _, tt := range tests {
		if got := tt.slo.Met(&tt.r); got != tt.want {
			t.Errorf("%s: Met = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestSLOsFor checks per-class objectives fall back to the default bound by bound.
func TestSLOsFor(t *testing.T) {
	t.Parallel()
	s := &SLOs{Default: SLO{TTFTMs: 2000, TPOTMs: 100}, Classes: map[string]SLO{"doc": {TTFTMs: 8000}}}
	tests := []struct {
		name  string
		slos  *SLOs
		class string
		want  SLO
	}{
		// A class with its own TTFT keeps the default TPOT.
		{"override one bound", s, "doc", SLO{TTFTMs: 8000, TPOTMs: 100}},
		// A class without an entry gets the default.
		{"unknown class", s, "chat", SLO{TTFTMs: 2000, TPOTMs: 100}},
		// An empty class name is the default class.
		{"empty class", s, "", SLO{TTFTMs: 2000, TPOTMs: 100}},
		// No table: no bounds.
		{"nil table", nil, "doc", SLO{}},
	}
	for _, tt := range tests {
		if got := tt.slos.For(tt.class); got != tt.want {
			t.Errorf("%s: For(%q) = %+v, want %+v", tt.name, tt.class, got, tt.want)
		}
	}
}

// TestGoodputSummary runs two classes with their own SLOs through an
// aggregate and checks goodput overall, per class and per bucket.
func TestGoodputSummary(t *testing.T) {
	t.Parallel()
	fast := withRes(aggBase, func(r *Result) { r.Class = "chat" }) // TTFT 100 ms
	slow := withRes(aggBase, func(r *Result) {                     // TTFT 900 ms
		r.Class, r.TTFTUS, r.E2EUS, r.EventsUS = "chat", 900_000, 950_000, []int64{900_000, 910_000, 930_000}
	})
	doc := withRes(slow, func(r *Result) { r.Class = "doc" }) // meets doc's 1000 ms
	failed := withRes(aggBase, func(r *Result) { r.Class = "doc"; r.Error = ErrHTTP5xx })
	warm := withRes(fast, func(r *Result) { r.Warmup = true })
	a := NewAggregate()
	a.SetSLOs(&SLOs{Default: SLO{TTFTMs: 500}, Classes: map[string]SLO{"doc": {TTFTMs: 1000}}})
	for _, r := range []Result{fast, slow, doc, failed, warm} {
		a.Add(&r)
	}
	s := a.Summary(closedInfo) // 10 s window
	checks := []struct {
		name string
		got  Goodput
		want Goodput
	}{
		// fast (and the warm-up request) met 500 ms, slow did not, doc met 1000 ms, failed did not:
		// 2 measured met of 4 measured; 3 completions met inside 10 s.
		{"overall", s.Goodput, Goodput{SLO: SLO{TTFTMs: 500}, Met: 2, Attainment: 0.5, RequestsPerS: 0.3}},
		// chat: fast met, slow missed; the warm-up request delivered inside the window.
		{"chat", s.Classes["chat"].Goodput, Goodput{SLO: SLO{TTFTMs: 500}, Met: 1, Attainment: 0.5, RequestsPerS: 0.2}},
		// doc: judged by its own 1000 ms; the failure counts against attainment.
		{"doc", s.Classes["doc"].Goodput, Goodput{SLO: SLO{TTFTMs: 1000}, Met: 1, Attainment: 0.5, RequestsPerS: 0.1}},
		// Every request has 0 prompt tokens sent: all land in the first bucket.
		{"bucket", s.InputBuckets[0].Goodput, Goodput{SLO: SLO{TTFTMs: 500}, Met: 2, Attainment: 0.5, RequestsPerS: 0.3}},
	}
	for _, c := range checks {
		if c.got.SLO != c.want.SLO || c.got.Met != c.want.Met || math.Abs(c.got.Attainment-c.want.Attainment) > 1e-9 ||
			math.Abs(c.got.RequestsPerS-c.want.RequestsPerS) > 1e-9 {
			t.Errorf("%s: goodput %+v, want %+v", c.name, c.got, c.want)
		}
	}
}

// BenchmarkAggregateAddJudged is BenchmarkAggregateAdd with SLOs and a
// model set: goodput and FLOPs on top of the usual figures.
func BenchmarkAggregateAddJudged(b *testing.B) {
	events := make([]int64, 128)
	for i := range events {
		events[i] = int64(100_000 + i*20_000 + i%7*300)
	}
	r := streamed(0, events, events[127]+1000, 128)
	r.PromptTokensSent, r.MaxTokens = 1024, 128
	a := NewAggregate()
	a.SetSLOs(&SLOs{Default: SLO{TTFTMs: 2000, TPOTMs: 100}})
	a.SetModel(&llama8B)
	b.ReportAllocs()
	for b.Loop() {
		a.Add(&r)
	}
}
