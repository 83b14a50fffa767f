package analyze

import (
	"time"

	"github.com/inferload/inferload/record"
)

// A step is steady when nothing in its measured window trends: the rule
// every constant step of a staged run, sweep or capacity search is held
// to, beside its sample counts. A load change that starts every user at
// once, or a warm-up too short for the server to settle, leaves the
// first part of the window unlike the rest: the step still has its
// samples, but its figures are a mix of two states.
//
// The rule: the measured window is cut into whole seconds; in each, the
// step's replies (successful requests that ended in it, warm-up ones
// included: they are load the server carried) and their median TTFT. A
// Mann-Kendall test (DriftAt) on each series, at SteadyAlpha shared by
// the two (Bonferroni), with the change fitted over the window; the step
// is not steady when either series trends significantly by at least
// SteadyMinChange. Fewer than MinTrendWindows seconds are not tested.
//
// Error rates, measured on constructed windows (TestSteadyFalseInvalid),
// 200 seeds each, Poisson replies around 20/s and lognormal median TTFTs
// (σ 0.1), independent or with the server's pace drifting from second
// to second (AR(1), φ = 0.5, a noisy host): steady windows of 10, 30 and
// 120 s were called unsteady 4 times in 1,200 (0.3%); a TTFT rising 40%
// over 30 s was caught 175 times in 200, over 60 s (noisy) 200, and a
// doubling over 10 s 130: ten windows test weakly. At α = 0.05 the 10 s
// windows' false-invalid rate was 4.5%, too many for ordinary steps.
const (
	SteadyAlpha     = 0.01
	SteadyMinChange = 0.20
)

// SteadySeries are a step's per-second figures over its measured window:
// seconds since the window's start (each second's midpoint), the replies
// in it, and the median TTFT of those with one.
type SteadySeries struct {
	Span             time.Duration
	ReplyTS, Replies []float64
	TTFTTS, TTFTP50  []float64
}

// Unsteady is the reason a step is not steady (the rule above), or ""
// when it is, or when the window is too short to tell.
func Unsteady(s SteadySeries) string {
	o := DriftOptions{Alpha: SteadyAlpha, MinChange: SteadyMinChange, Tests: 2}
	for _, v := range []DriftVerdict{
		DriftAt("replies/s", s.ReplyTS, s.Replies, s.Span, o),
		DriftAt("TTFT P50", s.TTFTTS, s.TTFTP50, s.Span, o),
	} {
		if v.Drifted {
			return "not steady: " + v.Verdict + ": lengthen the warm-up (load.warmup) so the step is measured once the load has settled"
		}
	}
	return ""
}

// JudgeSteady makes a constant step invalid when it is not steady; a
// ramp trends by design and is not judged.
func JudgeSteady(s *record.Step, series SteadySeries) {
	if s.Kind == record.StepRamp {
		return
	}
	if reason := Unsteady(series); reason != "" {
		s.Validity.Invalidate(record.InvalidUnsteady, reason)
	}
}

// SecondsOf cuts replies into the whole seconds of the window [fromUS,
// toUS): doneUS are the replies' ends and ttftUS their TTFTs (0: none).
func SecondsOf(doneUS, ttftUS []int64, fromUS, toUS int64) SteadySeries {
	n := int((toUS - fromUS) / 1e6)
	s := SteadySeries{Span: time.Duration(n) * time.Second}
	if n <= 0 {
		return s
	}
	counts := make([]float64, n)
	ttfts := make([][]float64, n)
	for i, d := range doneUS {
		if d < fromUS || d >= fromUS+int64(n)*1e6 {
			continue
		}
		w := (d - fromUS) / 1e6
		counts[w]++
		if ttftUS[i] > 0 {
			ttfts[w] = append(ttfts[w], float64(ttftUS[i]))
		}
	}
	for w := range n {
		mid := float64(w) + 0.5
		s.ReplyTS, s.Replies = append(s.ReplyTS, mid), append(s.Replies, counts[w])
		if len(ttfts[w]) > 0 {
			s.TTFTTS, s.TTFTP50 = append(s.TTFTTS, mid), append(s.TTFTP50, median(ttfts[w]))
		}
	}
	return s
}
