package report

import (
	"math"
	"testing"

	"github.com/inferload/inferload/record"
)

// TestTokenFlow: output tokens land in the seconds they streamed in, as
// the summary's throughput counts them, not in the second the reply
// completed; a reply without events delivers at its end; a day-long run
// stays within maxFlowColumns and loses no token.
func TestTokenFlow(t *testing.T) {
	t.Parallel()
	d := NewDigest()
	// 100 tokens over 10 events, one a second from 0.5 s: 10 tokens in
	// each of the seconds 0..9, though the reply completes at 9.5 s.
	events := make([]int64, 10)
	for i := range events {
		events[i] = int64(i)*1e6 + 5e5
	}
	d.Add(&record.Result{Stream: true, TTFTUS: 5e5, E2EUS: 95e5, OutputTokens: 100, EventsUS: events})
	// A non-streamed reply of 30 tokens completing at 20.2 s.
	d.Add(&record.Result{SendUS: 20e6, E2EUS: 2e5, OutputTokens: 30})
	// A failed request delivers nothing.
	d.Add(&record.Result{SendUS: 3e6, E2EUS: 1e6, OutputTokens: 50, Error: record.ErrHTTP5xx})
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
		if got := d.output.perSecond(tt.from, tt.to); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("[%v, %v): %v tokens/s, want %v", tt.from, tt.to, got, tt.want)
		}
	}
	long := NewDigest()
	for s := range int64(86_400) {
		long.Add(&record.Result{SendUS: s * 1e6, E2EUS: 1, OutputTokens: 2})
	}
	if n := len(long.output.cols); n > maxFlowColumns {
		t.Errorf("a day makes %d columns, want at most %d", n, maxFlowColumns)
	}
	if got := long.output.perSecond(0, 86_400); math.Abs(got-2) > 1e-9 {
		t.Errorf("a day at 2 tokens/s reads %v tokens/s", got)
	}
}
