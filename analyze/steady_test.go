package analyze

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// steadyWindow builds a step's per-second series of secs seconds whose
// truth is known by construction: replies Poisson around 20/s and a
// median TTFT lognormal around 100 ms (σ 0.1), both scaled by the
// server's pace, which drifts from second to second as an AR(1) of
// coefficient phi (0: independent seconds; 0.5: a noisy host whose slow
// seconds come in runs) around 1, times rise × (t / secs) for a planted
// trend (0: none).
func steadyWindow(rng *rand.Rand, secs int, phi, rise float64) SteadySeries {
	s := SteadySeries{Span: time.Duration(secs) * time.Second}
	pace := 0.0
	for w := range secs {
		pace = phi*pace + math.Sqrt(1-phi*phi)*0.05*rng.NormFloat64()
		slow := math.Exp(pace)
		mid := float64(w) + 0.5
		s.ReplyTS = append(s.ReplyTS, mid)
		s.Replies = append(s.Replies, float64(poisson(rng, 20/slow)))
		s.TTFTTS = append(s.TTFTTS, mid)
		s.TTFTP50 = append(s.TTFTP50, 100*slow*math.Exp(0.1*rng.NormFloat64())*(1+rise*mid/float64(secs)))
	}
	return s
}

func poisson(rng *rand.Rand, mean float64) int {
	l, k, p := math.Exp(-mean), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// TestSteadyFalseInvalid measures the steady rule's error rates on
// constructed windows: steady ones (no trend, independent seconds or a
// noisy host's runs of slow seconds) are rarely called unsteady, and
// planted TTFT rises are caught as often as their window's length
// allows. The figures are in steady.go's comment and docs/experiments.md.
func TestSteadyFalseInvalid(t *testing.T) {
	t.Parallel()
	const seeds = 200
	tests := []struct {
		name      string
		secs      int
		phi, rise float64
		// atMost and atLeast bound how many of the seeds are unsteady.
		atMost, atLeast int
	}{
		// Steady windows: measured 1, 1, 0 of 200 independent; 0, 2, 0
		// of 200 on a noisy host (4 of 1,200 in all, 0.3%).
		{"10 s steady", 10, 0, 0, 3, 0},
		{"30 s steady", 30, 0, 0, 3, 0},
		{"120 s steady", 120, 0, 0, 3, 0},
		{"10 s steady, noisy host", 10, 0.5, 0, 3, 0},
		{"30 s steady, noisy host", 30, 0.5, 0, 3, 0},
		{"120 s steady, noisy host", 120, 0.5, 0, 3, 0},
		// Planted rises, measured 130, 175 and 200 of 200. 10 windows
		// test weakly at 1% shared by two figures: a 40% rise over 10 s
		// is caught 1 time in 10, a doubling 2 times in 3.
		{"10 s TTFT +100%", 10, 0, 1, seeds, 120},
		{"30 s TTFT +40%", 30, 0, 0.4, seeds, 165},
		{"60 s TTFT +40%, noisy host", 60, 0.5, 0.4, seeds, 195},
		// A 10% rise is under the 20% that counts, however significant.
		{"120 s TTFT +10%", 120, 0, 0.1, 3, 0},
	}
	for _, tt := range tests {
		unsteady := 0
		for seed := range uint64(seeds) {
			rng := rand.New(rand.NewPCG(seed, 7))
			if Unsteady(steadyWindow(rng, tt.secs, tt.phi, tt.rise)) != "" {
				unsteady++
			}
		}
		t.Logf("%s: %d of %d unsteady", tt.name, unsteady, seeds)
		if unsteady > tt.atMost || unsteady < tt.atLeast {
			t.Errorf("%s: %d of %d unsteady, want %d to %d", tt.name, unsteady, seeds, tt.atLeast, tt.atMost)
		}
	}
}

// TestJudgeSteady: the reason names the figure, its change and what to
// do; a ramp is not judged; a window too short to test passes.
func TestJudgeSteady(t *testing.T) {
	t.Parallel()
	rising := SteadySeries{Span: 10 * time.Second}
	for w := range 10 {
		mid := float64(w) + 0.5
		rising.ReplyTS, rising.Replies = append(rising.ReplyTS, mid), append(rising.Replies, 20)
		rising.TTFTTS, rising.TTFTP50 = append(rising.TTFTTS, mid), append(rising.TTFTP50, 100+10*mid)
	}
	short := SteadySeries{Span: 4 * time.Second, TTFTTS: []float64{0.5, 1.5, 2.5, 3.5}, TTFTP50: []float64{1, 2, 3, 4}}
	tests := []struct {
		name   string
		kind   string
		series SteadySeries
		want   string // in the reason; "" for a valid step
	}{
		// TTFT from 105 to 195 ms over 10 s: +93% by Sen's slope.
		{"rising TTFT", record.StepConstant, rising, "not steady: TTFT P50 rose"},
		// A ramp rises by design.
		{"ramp", record.StepRamp, rising, ""},
		// 4 seconds cannot show a trend at 1%.
		{"too short", record.StepConstant, short, ""},
	}
	for _, tt := range tests {
		s := record.Step{Kind: tt.kind, Validity: record.Validity{Valid: true}}
		JudgeSteady(&s, tt.series)
		got := strings.Join(s.Validity.Reasons, "; ")
		if s.Validity.Valid != (tt.want == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: valid %v, reasons %q; want %q", tt.name, s.Validity.Valid, got, tt.want)
		}
		if kinds := strings.Join(s.Validity.Kinds, ","); tt.want != "" && kinds != record.InvalidUnsteady || tt.want == "" && kinds != "" {
			t.Errorf("%s: kinds %q, want %q for a reason %q", tt.name, kinds, record.InvalidUnsteady, tt.want)
		}
		if tt.want != "" && !strings.Contains(got, "lengthen the warm-up") {
			t.Errorf("%s: %q does not say what to do", tt.name, got)
		}
	}
}

// TestSecondsOf: replies fall in the whole seconds of the window;
// those outside it, and the part second at its end, are left out.
func TestSecondsOf(t *testing.T) {
	t.Parallel()
	// Window [1 s, 3.5 s): two whole seconds, [1, 2) and [2, 3).
	done := []int64{500_000, 1_000_000, 1_200_000, 2_999_999, 3_200_000}
	ttft := []int64{9, 100, 300, 0, 9}
	s := SecondsOf(done, ttft, 1_000_000, 3_500_000)
	if s.Span != 2*time.Second || len(s.Replies) != 2 || s.Replies[0] != 2 || s.Replies[1] != 1 {
		t.Errorf("replies %v over %s, want [2 1] over 2s", s.Replies, s.Span)
	}
	// The second second's only reply has no TTFT: it has no median.
	if len(s.TTFTP50) != 1 || s.TTFTP50[0] != 200 || s.TTFTTS[0] != 0.5 {
		t.Errorf("TTFT medians %v at %v, want [200] at [0.5]", s.TTFTP50, s.TTFTTS)
	}
}
