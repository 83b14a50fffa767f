package record

import (
	"testing"
)

// TestAddEventCapsAndKeepsEveryGap: past MaxEventsKept the offsets stop
// growing, the tail counts every dropped event, and the ITL histogram of the
// record sees exactly as many gaps as the stream had.
func TestAddEventCapsAndKeepsEveryGap(t *testing.T) {
	t.Parallel()
	const n = MaxEventsKept + 5000
	var (
		events []int64
		tail   EventsTail
	)
	for i := range n {
		// A gap of 1,234 µs, and 56,789 µs every 1,000th event.
		gap := int64(1234)
		if i%1000 == 999 {
			gap = 56789
		}
		us := int64(0)
		if len(events) > 0 {
			us = events[len(events)-1]
			if tail.Dropped > 0 {
				us = tail.LastUS
			}
		}
		events = AddEvent(events, &tail, us+gap)
	}
	if len(events) != MaxEventsKept || tail.Dropped != 5000 {
		t.Fatalf("kept %d dropped %d, want %d and 5000", len(events), tail.Dropped, MaxEventsKept)
	}
	r := Result{EventsUS: events, EventsTail: &tail}
	if got := r.ContentEvents(); got != n {
		t.Fatalf("ContentEvents %d, want %d", got, n)
	}
	h := NewHist()
	r.EachGap(h.RecordN)
	if h.Count() != n-1 {
		t.Fatalf("histogram saw %d gaps, want %d", h.Count(), n-1)
	}
	// 56,789 rounds down to 3 significant digits in the tail: 56,700.
	want := [][2]int64{{1230, 4995}, {56700, 5}}
	if len(tail.Gaps) != 2 || tail.Gaps[0] != want[0] || tail.Gaps[1] != want[1] {
		t.Fatalf("tail gaps %v, want %v", tail.Gaps, want)
	}
}

// TestRoundDigits: rounding down to 3 significant digits.
func TestRoundDigits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want int64 }{
		{-5, 0},                        // a stepped clock: kept as 0
		{0, 0},                         // zero stays
		{999, 999},                     // three digits are exact
		{1234, 1230},                   // the fourth digit goes
		{3_600_000_001, 3_600_000_000}, // 1 h and a bit
	} {
		if got := roundDigits(tt.in, 3); got != tt.want {
			t.Errorf("roundDigits(%d) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestRecordNMatchesRecord: n copies recorded at once equal n Record calls
// in every figure the histogram gives.
func TestRecordNMatchesRecord(t *testing.T) {
	t.Parallel()
	a, b := NewHist(), NewHist()
	for _, v := range []struct{ us, n int64 }{{5, 3}, {4_000_000_000, 2}, {-1, 1}, {77777, 1000}} {
		a.RecordN(v.us, v.n)
		for range v.n {
			b.Record(v.us)
		}
	}
	if a.Stats() != b.Stats() || a.Clamped() != b.Clamped() || a.QuantileUS(0.99) != b.QuantileUS(0.99) {
		t.Fatalf("RecordN %+v differs from Record %+v", a, b)
	}
}
