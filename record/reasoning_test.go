package record

import (
	"slices"
	"strings"
	"testing"
)

// reasoned is a closed-loop streamed request whose first k of events are
// reasoning: TTFT is the first event, TTFR too, TTFO event k.
func reasoned(events []int64, k int) Result {
	r := streamed(0, events, events[len(events)-1]+1000, len(events))
	r.ReasoningEvents, r.TTFRUS = k, events[0]
	if k < len(events) {
		r.TTFOUS = events[k]
	}
	return r
}

// TestChannelFigures: each request's TTFR, TTFO, reasoning phase and
// per-channel gaps, by the rule in reasoning.go, on streams whose channels
// are known by construction.
func TestChannelFigures(t *testing.T) {
	t.Parallel()
	type gaps struct{ reasoning, answer []int64 }
	tests := []struct {
		name             string
		r                Result
		ttfr, ttfo, phas int64 // 0: none
		want             gaps
	}{{
		// R R R A A at 100,110,130,200,205 ms: phase 100 ms; reasoning gaps
		// 10, 20; the switch gap 70 is neither's; answer gap 5.
		name: "reason then answer",
		r:    reasoned([]int64{100_000, 110_000, 130_000, 200_000, 205_000}, 3),
		ttfr: 100_000, ttfo: 200_000, phas: 100_000,
		want: gaps{reasoning: []int64{10_000, 20_000}, answer: []int64{5_000}},
	}, {
		// A reply that did not reason: TTFO is TTFT; no per-channel gap (all in ITL).
		name: "no reasoning",
		r:    streamed(0, []int64{100_000, 110_000}, 120_000, 2),
		ttfo: 100_000,
	}, {
		// Cut off while reasoning: a TTFR, no TTFO, no phase; reasoning gaps only.
		name: "unanswered",
		r:    reasoned([]int64{100_000, 110_000, 125_000}, 3),
		ttfr: 100_000,
		want: gaps{reasoning: []int64{10_000, 15_000}},
	}, {
		// Interleaved (R A R A): TTFR and TTFO kept, phase 10 ms, no per-channel gap.
		name: "interleaved",
		r: withRes(reasoned([]int64{100_000, 110_000, 120_000, 130_000}, 2), func(r *Result) {
			r.TTFOUS, r.ChannelsInterleaved = 110_000, true
		}),
		ttfr: 100_000, ttfo: 110_000, phas: 10_000,
	}, {
		// Answer first, then reasoning (interleaved): TTFO before TTFR has no phase.
		name: "answer before reasoning",
		r: withRes(reasoned([]int64{100_000, 110_000}, 1), func(r *Result) {
			r.TTFRUS, r.TTFOUS, r.ChannelsInterleaved = 110_000, 100_000, true
		}),
		ttfr: 110_000, ttfo: 100_000,
	}, {
		// Not streamed: a whole reply times the transport, not generation.
		name: "not streamed",
		r:    withRes(reasoned([]int64{100_000, 110_000}, 1), func(r *Result) { r.Stream = false }),
	}, {
		// A capped stream whose reasoning ended among the kept events: the
		// tail's gaps are the answer's.
		name: "tail after the phase",
		r: withRes(reasoned([]int64{100, 200, 300}, 1), func(r *Result) {
			r.EventsTail = &EventsTail{Dropped: 2, LastUS: 500, Gaps: [][2]int64{{100, 2}}}
		}),
		ttfr: 100, ttfo: 200, phas: 100,
		want: gaps{answer: []int64{100, 100, 100}},
	}, {
		// Reasoning runs into the tail: its gaps' channels are unknown, left out.
		name: "tail within the phase",
		r: withRes(reasoned([]int64{100, 200, 300}, 3), func(r *Result) {
			r.ReasoningEvents = 4
			r.EventsTail = &EventsTail{Dropped: 2, LastUS: 500, Gaps: [][2]int64{{100, 2}}}
			r.TTFOUS = 500
		}),
		ttfr: 100, ttfo: 500, phas: 400,
		want: gaps{reasoning: []int64{100, 100}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			check := func(what string, got int64, ok bool, want int64) {
				if !ok {
					got = 0
				}
				if got != want {
					t.Errorf("%s %d (ok %v), want %d", what, got, ok, want)
				}
			}
			got, ok := TTFRUSOf(&tt.r)
			check("TTFR", got, ok, tt.ttfr)
			got, ok = TTFOUSOf(&tt.r)
			check("TTFO", got, ok, tt.ttfo)
			got, ok = ReasoningPhaseUS(&tt.r)
			check("phase", got, ok, tt.phas)
			var g gaps
			add := func(to *[]int64) func(int64, int64) {
				return func(gap, n int64) {
					for range n {
						*to = append(*to, gap)
					}
				}
			}
			tt.r.EachChannelGap(add(&g.reasoning), add(&g.answer))
			if !slices.Equal(g.reasoning, tt.want.reasoning) || !slices.Equal(g.answer, tt.want.answer) {
				t.Errorf("gaps %+v, want %+v", g, tt.want)
			}
		})
	}
}

// TestReasoningAggregate: the summary's per-channel figures, worked out by
// hand, and their absence from a run where nothing reasoned.
func TestReasoningAggregate(t *testing.T) {
	t.Parallel()
	// A plain request (TTFT 50 ms) first, so TTFO must carry it over from
	// the TTFT histogram; then one reasoning 100 ms before answering at
	// 200 ms, and one cut off while reasoning.
	recs := []Result{
		streamed(0, []int64{50_000, 60_000}, 70_000, 2),
		reasoned([]int64{100_000, 110_000, 130_000, 200_000, 205_000}, 3),
		withRes(reasoned([]int64{80_000, 90_000}, 2), func(r *Result) { r.Class = "other" }),
	}
	got := flatten(t, summarize(closedInfo, recs))
	for path, want := range map[string]any{
		"metrics.ttfr_ms.count": 2.0, "metrics.ttfr_ms.min": 80.0, "metrics.ttfr_ms.max": 100.0,
		"metrics.ttfo_ms.count": 2.0, "metrics.ttfo_ms.min": 50.0, "metrics.ttfo_ms.max": 200.0,
		"metrics.reasoning_ms.count": 1.0, "metrics.reasoning_ms.p50": 100.0,
		// Reasoning gaps 10, 20 (first request) and 10 (the other class), merged over classes.
		"metrics.itl_reasoning_ms.count": 3.0, "metrics.itl_reasoning_ms.max": 20.0,
		"metrics.itl_answer_ms.count": 1.0, "metrics.itl_answer_ms.p50": 5.0,
		"reasoning.requests": 2.0, "reasoning.unanswered": 1.0, "reasoning.interleaved": 0.0,
		"reasoning.reasoning_events": 5.0, "reasoning.answer_events": 2.0,
		"classes.default.metrics.ttfo_ms.count": 2.0, "classes.other.reasoning.requests": 1.0,
	} {
		checkPath(t, got, path, want)
	}
	plain := flatten(t, summarize(closedInfo, []Result{aggBase}))
	for path := range plain {
		for _, absent := range []string{"ttfr_ms", "ttfo_ms", "reasoning_ms", "itl_reasoning_ms", "itl_answer_ms", "reasoning."} {
			if strings.Contains(path, absent) {
				t.Errorf("a run that did not reason has %s", path)
			}
		}
	}
}
