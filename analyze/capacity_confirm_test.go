package analyze

import (
	"slices"
	"testing"
)

// TestNextLoadConfirms replays searches whose verdicts are set by
// construction (a load passes at or below capacity, except the probes
// listed as flaky) and checks that the answer is probed again Confirm
// times, that a failed confirmation steps the search back, and what the
// budget leaves unconfirmed.
func TestNextLoadConfirms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		capacity float64
		// flaky fails the k-th probe (from 1) at a load that would pass.
		flaky  map[float64]int
		o      SearchOptions
		probes []float64
		answer float64
		// confirmations is Confirmations at the answer.
		confirmations int
	}{
		// Capacity 11, confirm 2: the search of TestNextLoad, then 11 twice more.
		{"confirmed", 11, nil, SearchOptions{Low: 1, High: 64, Whole: true, MaxProbes: 20, Confirm: 2},
			[]float64{1, 2, 4, 8, 16, 12, 10, 11, 11, 11}, 11, 2},
		// 11's first confirmation fails: 11 now fails, 10 (the pass below,
		// adjacent) is the answer and is confirmed twice in turn.
		{"steps back", 11, map[float64]int{11: 2}, SearchOptions{Low: 1, High: 64, Whole: true, MaxProbes: 20, Confirm: 2},
			[]float64{1, 2, 4, 8, 16, 12, 10, 11, 11, 10, 10}, 10, 2},
		// 8's confirmation fails with a gap below it: the search bisects
		// 4..8 again (6, 7) and confirms 7.
		{"steps back and bisects", 8, map[float64]int{8: 2}, SearchOptions{Low: 1, High: 64, Whole: true, MaxProbes: 20, Confirm: 1},
			[]float64{1, 2, 4, 8, 16, 12, 10, 9, 8, 6, 7, 7}, 7, 1},
		// The budget runs out after one of two confirmations: the answer
		// stands, unconfirmed (1 < 2).
		{"budget", 11, nil, SearchOptions{Low: 1, High: 64, Whole: true, MaxProbes: 9, Confirm: 2},
			[]float64{1, 2, 4, 8, 16, 12, 10, 11, 11}, 11, 1},
		// Everything passes: the ceiling is the answer, and is confirmed.
		{"ceiling", 1000, nil, SearchOptions{Low: 1, High: 20, Whole: true, Confirm: 1},
			[]float64{1, 2, 4, 8, 16, 20, 20}, 20, 1},
		// The lowest load's confirmation fails: no answer, nothing more to probe.
		{"lowest fails its confirmation", 4, map[float64]int{4: 2}, SearchOptions{Low: 4, High: 4, Whole: true, Confirm: 3},
			[]float64{4, 4}, 0, 0},
		// Rates: 3.25's confirmation fails; 3 is the pass below within 10%.
		{"rates", 3.3, map[float64]int{3.25: 2}, SearchOptions{Low: 0.5, High: 100, Confirm: 1},
			[]float64{0.5, 1, 2, 4, 3, 3.5, 3.25, 3.25, 3}, 3, 1},
	}
	for _, tt := range tests {
		var passed, failed, probes []float64
		seen := map[float64]int{}
		for {
			next, done := NextLoad(passed, failed, tt.o)
			if done {
				break
			}
			probes = append(probes, next)
			seen[next]++
			if next <= tt.capacity && tt.flaky[next] != seen[next] {
				passed = append(passed, next)
			} else {
				failed = append(failed, next)
			}
			if len(probes) > 50 {
				t.Fatalf("%s: search does not end: %v", tt.name, probes)
			}
		}
		answer := Capacity(passed, failed)
		if !slices.Equal(probes, tt.probes) || answer != tt.answer || Confirmations(passed, answer) != tt.confirmations {
			t.Errorf("%s: probes %v answer %v confirmed %d times; want %v answer %v confirmed %d times",
				tt.name, probes, answer, Confirmations(passed, answer), tt.probes, tt.answer, tt.confirmations)
		}
	}
}
