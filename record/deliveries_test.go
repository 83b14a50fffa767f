package record

import (
	"math"
	"slices"
	"testing"
)

// TestDeliveries: a request counts in the second it finished, its tokens
// in the seconds they arrived; a reply whose later events were folded
// into EventsTail delivers those tokens between its last kept event and
// its last event, not at the kept events (compare used to spread every
// token over the kept events, so a long reply's tail landed early);
// failures deliver nothing; Window keeps whole seconds only.
func TestDeliveries(t *testing.T) {
	t.Parallel()
	var d Deliveries
	// 4 tokens, one per content event: kept events at 0.5 s and 1.5 s,
	// 2 more dropped, the last at 3.5 s. The dropped 2 spread over
	// 1.5 s .. 3.5 s: 0.5 in second 1, 1 in second 2, 0.5 in second 3.
	d.Add(&Result{SendUS: 0, E2EUS: 3_600_000, Stream: true, TTFTUS: 500_000, OutputTokens: 4,
		EventsUS: []int64{500_000, 1_500_000}, EventsTail: &EventsTail{Dropped: 2, LastUS: 3_500_000}})
	d.Add(&Result{SendUS: 100_000, E2EUS: 200_000, Error: ErrHTTP5xx, OutputTokens: 9})
	d.Add(&Result{SendUS: 4_000_000, E2EUS: 100_000, OutputTokens: 3}) // not streamed: all at its end
	requests, tokens := d.Window(0, 5_000_000)
	if want := []float64{0, 0, 0, 1, 1}; !slices.Equal(requests, want) {
		t.Errorf("requests per second %v, want %v", requests, want)
	}
	want := []float64{1, 1.5, 1, 0.5, 3}
	for i := range want {
		if math.Abs(tokens[i]-want[i]) > 1e-9 {
			t.Fatalf("tokens per second %v, want %v", tokens, want)
		}
	}
	// Partial seconds at the edges are left out; seconds past the last
	// delivery are zeros.
	if r, _ := d.Window(500_000, 7_000_000); len(r) != 6 || r[5] != 0 {
		t.Errorf("window 0.5 s .. 7 s: %v, want seconds 1..6", r)
	}
}
