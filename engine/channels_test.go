package engine

import (
	"testing"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
)

// TestFillChannels: a trace's channel positions become the record's TTFR
// and TTFO from the latency origin (TTFT 150 ms here, the first event 100
// ms after the send: a 50 ms client queue delay in open loop).
func TestFillChannels(t *testing.T) {
	t.Parallel()
	events := []int64{100_000, 110_000, 130_000, 200_000}
	tests := []struct {
		name       string
		tr         protocol.Trace
		ttfr, ttfo int64
	}{
		// Did not reason: nothing set (TTFO is TTFT by record.TTFOUSOf).
		{"no reasoning", protocol.Trace{EventsUS: events, FirstAnswer: 1}, 0, 0},
		// Reasoned for 3 events, answered at the 4th: TTFO 150 + 100 ms.
		{"reason then answer", protocol.Trace{EventsUS: events, ReasoningEvents: 3, FirstReasoning: 1, FirstAnswer: 4}, 150_000, 250_000},
		// Cut off while reasoning: no TTFO.
		{"unanswered", protocol.Trace{EventsUS: events, ReasoningEvents: 4, FirstReasoning: 1}, 150_000, 0},
		// Answered first, reasoned from the 2nd event on.
		{"answer first", protocol.Trace{EventsUS: events, ReasoningEvents: 1, FirstReasoning: 2, FirstAnswer: 1, Interleaved: true}, 160_000, 150_000},
		// The first answer fell past the kept events: its stamp on arrival.
		{"past the kept events", protocol.Trace{EventsUS: events, ReasoningEvents: 9, FirstReasoning: 1, FirstAnswer: 10, FirstAnswerUS: 900_000}, 150_000, 950_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := record.Result{TTFTUS: 150_000}
			fillChannels(&r, &tt.tr)
			if r.TTFRUS != tt.ttfr || r.TTFOUS != tt.ttfo || r.ReasoningEvents != tt.tr.ReasoningEvents || r.ChannelsInterleaved != tt.tr.Interleaved {
				t.Errorf("TTFR %d TTFO %d events %d interleaved %v, want %d %d %d %v", r.TTFRUS, r.TTFOUS,
					r.ReasoningEvents, r.ChannelsInterleaved, tt.ttfr, tt.ttfo, tt.tr.ReasoningEvents, tt.tr.Interleaved)
			}
		})
	}
}
