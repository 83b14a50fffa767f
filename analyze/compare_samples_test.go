package analyze

import (
	"testing"

	"github.com/inferload/inferload/record"
)

// TestSamplesCountTailGaps: compare's ITL samples hold every gap of a
// capped stream, the tail's too, as the summary's ITL does: 3 kept gaps
// and 1,000 in the tail are 1,003 samples.
func TestSamplesCountTailGaps(t *testing.T) {
	t.Parallel()
	r := &record.Result{Stream: true, TTFTUS: 10_000, E2EUS: 100_000, OutputTokens: 1004,
		EventsUS:   []int64{10_000, 15_000, 20_000, 25_000},
		EventsTail: &record.EventsTail{Dropped: 1000, LastUS: 100_000, Gaps: [][2]int64{{50_000, 1000}}}}
	var s Samples
	s.Add(r)
	if len(s.ITL) != 1003 {
		t.Fatalf("%d ITL samples, want 1003", len(s.ITL))
	}
	if s.ITL[len(s.ITL)-1] != 50 {
		t.Errorf("the last sample is %v ms, want a tail gap of 50 ms", s.ITL[len(s.ITL)-1])
	}
}
