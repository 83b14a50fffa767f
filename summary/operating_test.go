package summary

import (
	"strings"
	"testing"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
)

// TestOperatingPoint: a sweep's operating point is the SLO answer when it
// has objectives (the highest judged step below every miss), the knee's
// fraction when it has none; every answer says what to run next.
func TestOperatingPoint(t *testing.T) {
	t.Parallel()
	chat := record.SLO{TTFTMs: 500, Share: 0.9, Class: "chat"}
	sweep := Design{Kind: KindSweep, Knee: &KneeDesign{Mode: record.ModeClosed}}
	withSLO := sweep
	withSLO.Capacity = &CapacityJudging{Mode: record.ModeClosed, SLOs: []record.SLO{chat}, Sweep: true}
	knee := &record.Knee{Found: true, Load: 64, Recommended: 51, OperatingFraction: 0.8}
	probes := func(verdicts string) *record.Capacity {
		c := &record.Capacity{SLOs: []string{chat.String()}}
		var passed, failed []float64
		for i, v := range strings.Fields(verdicts) {
			load := float64(int(8) << i) // 8, 16, 32, 64
			p := record.CapacityProbe{Step: i + 2, Load: load, Passed: v == "pass", NoVerdict: v == "none"}
			c.Probes = append(c.Probes, p)
			switch v {
			case "pass":
				passed = append(passed, load)
			case "fail":
				failed = append(failed, load)
			}
		}
		c.Load = analyze.Capacity(passed, failed)
		c.Found = c.Load > 0
		return c
	}
	tests := []struct {
		name  string
		d     Design
		knee  *record.Knee
		c     *record.Capacity
		found bool
		load  float64
		basis string
		says  []string
	}{
		{"knee without SLOs", sweep, knee, nil, true, 51, record.OperatingKnee, []string{"51 users, 80% of the knee at 64 users", "no SLO was declared"}},
		{"neither", sweep, &record.Knee{}, nil, false, 0, record.OperatingKnee, []string{"none: no knee"}},
		// The user's case: the knee at 64, the chat SLO held only to 16.
		{"SLO below the knee", withSLO, knee, probes("pass pass fail fail"), true, 16, record.OperatingSLO,
			[]string{"at most 16 users", "chat: TTFT p90 ≤ 500ms", "32 users missed", "find-capacity --users 16:32 --slo 'chat:ttft.p90<=500ms'"}},
		// A step met again after a miss does not count.
		{"not monotone", withSLO, knee, probes("pass fail pass pass"), true, 8, record.OperatingSLO, []string{"at most 8 users", "16 users missed"}},
		// A step with too few samples is neither: the answer rests on the others.
		{"no verdict skipped", withSLO, knee, probes("none pass fail fail"), true, 16, record.OperatingSLO, []string{"at most 16 users"}},
		{"none met", withSLO, knee, probes("none fail fail fail"), false, 0, record.OperatingSLO,
			[]string{"none: no step met", "not even the lowest judged, 16 users", "--users 1:16"}},
		{"none judged", withSLO, knee, probes("none none"), false, 0, record.OperatingSLO, []string{"no step could show", "lengthen the steps"}},
		// Past the knee the SLO still held: said, so the reader knows the headroom is thin.
		{"SLO above the knee", withSLO, &record.Knee{Found: true, Load: 16, Recommended: 12, OperatingFraction: 0.8}, probes("pass pass pass fail"), true, 32, record.OperatingSLO,
			[]string{"at most 32 users", "past the knee at 16 users"}},
		{"every step met", withSLO, knee, probes("pass pass pass pass"), true, 64, record.OperatingSLO, []string{"at least 64 users", "add higher loads"}},
	}
	for _, tt := range tests {
		op := operatingOf(tt.d, tt.knee, tt.c)
		if op == nil || op.Found != tt.found || op.Load != tt.load || op.Basis != tt.basis || op.Mode != record.ModeClosed {
			t.Errorf("%s: %+v; want found %v at %v by %s", tt.name, op, tt.found, tt.load, tt.basis)
			continue
		}
		for _, want := range tt.says {
			if !strings.Contains(op.Reason, want) {
				t.Errorf("%s: reason %q lacks %q", tt.name, op.Reason, want)
			}
		}
	}
	if op := operatingOf(Design{Kind: KindCapacity}, nil, probes("pass")); op != nil {
		t.Errorf("a capacity search has no operating point of its own: %+v", op)
	}
}

// TestFindCapacityCommand: the loads between the two steps in the sweep's
// loop, every objective quoted as --slo reads it.
func TestFindCapacityCommand(t *testing.T) {
	t.Parallel()
	c := &CapacityJudging{SLOs: []record.SLO{{TTFTMs: 2000, TPOTMs: 80, Share: 0.99}}}
	if got, want := findCapacityCommand(c, record.ModeOpen, 4, 8), "inferload find-capacity --rates 4:8 --slo 'ttft.p99<=2s' --slo 'tpot.p99<=80ms'"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := findCapacityCommand(c, record.ModeOpen, 0, 8); !strings.Contains(got, "--rates 1:8") {
		t.Errorf("below the lowest rate: %q, want --rates 1:8 (an eighth of it)", got)
	}
}

// TestSweepStepWithoutVerdict: a sweep's step that missed nothing but
// could not show its objective held has no verdict; a search's probe
// with the same figures fails, and a shown miss fails in both.
func TestSweepStepWithoutVerdict(t *testing.T) {
	t.Parallel()
	slo := record.SLO{TTFTMs: 500, Share: 0.9}
	valid := &record.Step{Index: 2, Target: 8, Validity: record.Validity{Valid: true}}
	invalid := &record.Step{Index: 2, Target: 8, Validity: record.Validity{Reasons: []string{"client saturated"}}}
	few := []analyze.Tally{{N: 5}}
	missed := []analyze.Tally{{N: 100, Exceed: 50}}
	held := []analyze.Tally{{N: 100}}
	tests := []struct {
		name            string
		sweep           bool
		step            *record.Step
		tallies         []analyze.Tally
		passed, verdict bool
	}{
		{"sweep, too few samples", true, valid, few, false, false},
		{"search, too few samples", false, valid, few, false, true},
		{"sweep, shown missed", true, valid, missed, false, true},
		{"sweep, held on an invalid step", true, invalid, held, false, false},
		{"sweep, missed on an invalid step", true, invalid, missed, false, true},
		{"sweep, held", true, valid, held, true, true},
	}
	for _, tt := range tests {
		c := &CapacityJudging{SLOs: []record.SLO{slo}, Confidence: 0.95, MaxFailureRate: 0.01, Sweep: tt.sweep}
		p := JudgeProbe(c, tt.step, tt.tallies)
		if p.Passed != tt.passed || p.NoVerdict == tt.verdict {
			t.Errorf("%s: passed %v, no verdict %v; want passed %v, a verdict %v (%v)", tt.name, p.Passed, p.NoVerdict, tt.passed, tt.verdict, p.Reasons)
		}
	}
}
