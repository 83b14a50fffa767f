package experiment

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
	"github.com/inferload/inferload/schedule"
)

// flakyTarget serves every stage from good, but for the bad-th stage at
// load at, which it serves from bad: a server caught once in a bad state,
// so which probe fails is known by construction.
type flakyTarget struct {
	good, bad virtualTarget
	at        float64
	badTh     int
	seen      map[float64]int
}

func (f *flakyTarget) serve(st schedule.Stage, warmup, grace time.Duration, startUS int64) ([]record.Result, error) {
	f.seen[st.Target]++
	if st.Target == f.at && f.seen[st.Target] == f.badTh {
		return f.bad.serve(st, warmup, grace, startUS)
	}
	return f.good.serve(st, warmup, grace, startUS)
}

// TestVirtualCapacityConfirmStepsBack: find-capacity on the lockstep
// 8-slot server of the no-cliff case (every reply 16 tokens, TTFT p90 ≤
// 100 ms: 8 users hold, 9 do not), whose second probe at 8 users is
// served by a 1-slot server (TTFT far over the bound). Without --confirm
// the search answers 8; with --confirm 2 it probes 8 again, that
// confirmation fails, and it steps back: bisects 4..8 (6, 7) and confirms
// 7 twice. With too small a budget the answer is reported unconfirmed.
// The summary rebuilds identically.
func TestVirtualCapacityConfirmStepsBack(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		search    analyze.SearchOptions
		probes    []float64
		confirmed []bool // which probes are confirmations
		answer    float64
		confirms  int // the answer's confirmations
		reason    []string
		terminal  string // a line the terminal summary must print
	}{
		// No confirmation: 8 is probed once, so the bad state is never met.
		{"no confirm", analyze.SearchOptions{Low: 4, High: 16, Whole: true},
			[]float64{4, 8, 16, 12, 10, 9}, make([]bool, 6), 8, 0,
			[]string{"capacity 8 users"}, "step 2 at 8: pass"},
		// Confirm 2: 8's confirmation (step 7) fails; 7 is the answer, confirmed 2 of 2.
		{"confirm 2", analyze.SearchOptions{Low: 4, High: 16, Whole: true, MaxProbes: 12, Confirm: 2},
			[]float64{4, 8, 16, 12, 10, 9, 8, 6, 7, 7, 7}, []bool{false, false, false, false, false, false, true, false, false, true, true}, 7, 2,
			[]string{"capacity 7 users", "the confirmation at 8 users (step 7) failed, so 8 users counts as failing and the search stepped back below it",
				"confirmed 2 of 2: every one of the 3 probes at 7 users passed"}, "step 7 at 8: confirmation fail"},
		// The budget (9) runs out before 7 is confirmed: said so.
		{"budget", analyze.SearchOptions{Low: 4, High: 16, Whole: true, MaxProbes: 9, Confirm: 2},
			[]float64{4, 8, 16, 12, 10, 9, 8, 6, 7}, []bool{false, false, false, false, false, false, true, false, false}, 7, 0,
			[]string{"capacity 7 users", "UNCONFIRMED: the probe budget (9) ran out after 0 of 2 confirmations at 7 users"}, "step 7 at 8: confirmation fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := cliffCase{8, 16, 16, "ttft.p90<=100ms", 4 * time.Second}
			target := &flakyTarget{good: cliffTarget(t, 8, 1, 16, 16), bad: cliffTarget(t, 1, 1, 16, 16), at: 8, badTh: 2, seen: map[float64]int{}}
			p := virtualPlan(t, "  concurrency: 1\n  warmup: 200ms")
			out := virtualCapacity(t, p, CapacityOptions{Mode: record.ModeClosed, Search: tt.search,
				SLOs: []record.SLO{c.objective(t)}, ProbeDuration: c.probe}, target)
			got := out.Summary.Capacity
			var loads []float64
			var confirmations []bool
			for _, pr := range got.Probes {
				loads, confirmations = append(loads, pr.Load), append(confirmations, pr.Confirmation)
			}
			if !slices.Equal(loads, tt.probes) || !slices.Equal(confirmations, tt.confirmed) || got.Load != tt.answer || got.Confirmations != tt.confirms || got.Confirm != tt.search.Confirm {
				t.Fatalf("probes %v (confirmations %v), answer %v confirmed %d of %d; want %v (%v), %v confirmed %d of %d",
					loads, confirmations, got.Load, got.Confirmations, got.Confirm, tt.probes, tt.confirmed, tt.answer, tt.confirms, tt.search.Confirm)
			}
			for _, want := range tt.reason {
				if !strings.Contains(got.Reason, want) {
					t.Errorf("reason %q, want it to say %q", got.Reason, want)
				}
			}
			var term bytes.Buffer
			if err := report.WriteSummary(&term, out.Summary); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(term.String(), tt.terminal) {
				t.Errorf("terminal summary does not say %q:\n%s", tt.terminal, term.String())
			}
			checkAnswerFollowsProbes(t, got)
			expectRebuildIdentical(t, out.Dir)
			t.Log(got.Reason)
		})
	}
}
