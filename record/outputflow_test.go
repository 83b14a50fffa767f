package record

import (
	"math"
	"testing"
)

// TestOutputFlow: output tokens land in the seconds they streamed in, as
// the summary's throughput counts them, not in the second the reply
// completed; a reply without events delivers at its end; a day-long run
// stays within maxFlowColumns and loses no token.
func TestOutputFlow(t *testing.T) {
	t.Parallel()
	var d OutputFlow
	// 100 tokens over 10 events, one a second from 0.5 s: 10 tokens in
	// each of the seconds 0..9, though the reply completes at 9.5 s.
	events := make([]int64, 10)
	for i := range events {
		events[i] = int64(i)*1e6 + 5e5
	}
	d.Add(&Result{Stream: true, TTFTUS: 5e5, E2EUS: 95e5, OutputTokens: 100, EventsUS: events})
	// A non-streamed reply of 30 tokens completing at 20.2 s.
	d.Add(&Result{SendUS: 20e6, E2EUS: 2e5, OutputTokens: 30})
	// A failed request delivers nothing.
	d.Add(&Result{SendUS: 3e6, E2EUS: 1e6, OutputTokens: 50, Error: ErrHTTP5xx})
	tests := []struct {
		from, to, want float64 // a window of the run clock in s, tokens/s in it
	}{
		{0, 1, 10},     // the first second holds one event's 10 tokens
		{9, 10, 10},    // the last event, not the whole reply
		{0, 10, 10},    // all 100 over 10 s
		{20, 21, 30},   // the non-streamed reply at its end
		{10, 20, 0},    // nothing arrived in between
		{0.5, 1.5, 10}, // half of second 0, half of second 1
	}
	for _, tt := range tests {
		if got := d.PerSecond(tt.from, tt.to); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("[%v, %v): %v tokens/s, want %v", tt.from, tt.to, got, tt.want)
		}
	}
	var long OutputFlow
	for s := range int64(86_400) {
		long.Add(&Result{SendUS: s * 1e6, E2EUS: 1, OutputTokens: 2})
	}
	if n := len(long.cols); n > maxFlowColumns {
		t.Errorf("a day makes %d columns, want at most %d", n, maxFlowColumns)
	}
	if got := long.PerSecond(0, 86_400); math.Abs(got-2) > 1e-9 {
		t.Errorf("a day at 2 tokens/s reads %v tokens/s", got)
	}
}

// TestOutputFlowIsThroughput: over the measured window, the flow a chart
// draws reads the summary's output_tokens_per_s, whatever the replies:
// streamed, with a capped stream's dropped tail, not streamed, in the
// warm-up but delivering inside the window, or failed.
func TestOutputFlowIsThroughput(t *testing.T) {
	t.Parallel()
	recs := []*Result{
		// Streamed from 9 s: half its events before the window (10 s).
		{SendUS: 9e6, Stream: true, Warmup: true, TTFTUS: 2e5, E2EUS: 2e6, OutputTokens: 40,
			EventsUS: []int64{2e5, 6e5, 1.4e6, 1.8e6}},
		// A capped stream: two kept events, 6 dropped up to 17.5 s.
		{SendUS: 12e6, Stream: true, TTFTUS: 1e5, E2EUS: 5.6e6, OutputTokens: 80,
			EventsUS: []int64{1e5, 3e5}, EventsTail: &EventsTail{Dropped: 6, LastUS: 5.5e6, Gaps: [][2]int64{{866_667, 6}}}},
		// Not streamed: everything at its end, 13.3 s.
		{SendUS: 13e6, E2EUS: 3e5, OutputTokens: 25},
		// Failed: delivers nothing.
		{SendUS: 14e6, E2EUS: 1e5, OutputTokens: 60, Error: ErrHTTP5xx},
		// Finishes after issuing stopped (20 s): outside the window.
		{SendUS: 19.5e6, Stream: true, TTFTUS: 1e5, E2EUS: 2e6, OutputTokens: 10,
			EventsUS: []int64{1e5, 1.9e6}},
	}
	a := NewAggregate()
	var f OutputFlow
	for _, r := range recs {
		a.Add(r)
		f.Add(r)
	}
	s := a.Summary(RunInfo{WarmupEndUS: 10e6, MeasureEndUS: 20e6, EndUS: 22e6})
	got := f.PerSecond(10, 20)
	if want := s.Throughput.OutputTokensPerS; math.Abs(got-want) > 1e-9 || want == 0 {
		t.Errorf("flow over the window reads %v tokens/s, the summary %v", got, want)
	}
}
