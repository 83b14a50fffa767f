package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Trend is the Mann-Kendall trend test of a series with Sen's slope: a
// rank test, so one outlier window cannot fake a trend, and no assumption
// that the values are normal (window P99s are not).
type Trend struct {
	N int
	// S is Σ sign(x_j − x_i) over every pair i < j: positive when later
	// values tend to be larger.
	S int
	// Z is S normalised by its standard deviation under "no trend"
	// (continuity-corrected, ties accounted for); P its two-sided p-value.
	Z, P float64
	// Slope is Sen's slope: the median of (x_j − x_i)/(t_j − t_i), per
	// unit of t (per window when the windows are equally spaced).
	Slope float64
	// Start is the fitted line's value at the first window.
	Start float64
	// Span is t of the last window less t of the first: Slope × Span is
	// the fitted change from the first window to the last.
	Span float64
	// slopes are every pairwise slope, sorted, and varS is Var(S):
	// SlopeInterval reads them.
	slopes []float64
	varS   float64
}

// MinTrendWindows is the fewest windows a trend test can ever call
// significant at 5%: with 4, even a perfectly rising series has p ≈ 0.09.
const MinTrendWindows = 5

// MannKendall tests xs, one value per equally spaced window, for a
// monotonic trend.
func MannKendall(xs []float64) Trend {
	ts := make([]float64, len(xs))
	for i := range ts {
		ts[i] = float64(i)
	}
	return MannKendallAt(ts, xs)
}

// MannKendallAt tests xs, measured at increasing times ts, for a
// monotonic trend. S uses only the order of the values, so windows of
// unequal length (a quantile's windows, each sized to hold enough
// samples) test as equal ones do; Sen's slope divides by the time
// between windows, so it is per unit of t.
func MannKendallAt(ts, xs []float64) Trend {
	n := len(xs)
	t := Trend{N: n, P: 1}
	if n < 2 {
		return t
	}
	t.slopes = make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d := xs[j] - xs[i]
			switch {
			case d > 0:
				t.S++
			case d < 0:
				t.S--
			}
			t.slopes = append(t.slopes, d/(ts[j]-ts[i]))
		}
	}
	slices.Sort(t.slopes)
	t.Slope = median(t.slopes)
	t.Span = ts[n-1] - ts[0]
	t.Start = median(xs) - t.Slope*(median(ts)-ts[0])
	t.varS = mkVariance(xs)
	sd := math.Sqrt(t.varS)
	switch {
	case sd == 0:
	case t.S > 0:
		t.Z = float64(t.S-1) / sd
	case t.S < 0:
		t.Z = float64(t.S+1) / sd
	}
	t.P = math.Erfc(math.Abs(t.Z) / math.Sqrt2)
	return t
}

// SlopeInterval is the confidence interval of Sen's slope at level, by
// the rank rule that inverts the Mann-Kendall test (Gilbert 1987, §16.4):
// of the N' sorted pairwise slopes, the bounds are the M1-th and the
// (M2+1)-th smallest, M1,2 = (N' ∓ z·√Var(S)) / 2, z the standard normal
// quantile at (1 + level)/2. Non-integer ranks round outwards, so the
// interval never claims more than the test can. So the interval excludes
// 0 about when the test rejects "no trend" at 1 − level.
//
// Example: 10 rising windows, N' = 45, Var(S) = 125, at 95%:
// z·√Var(S) = 21.9, M1 = 11.5, M2 = 33.5: the 11th and the 35th slopes.
// With 5 windows even 95% gives the smallest and the largest slope: so
// few windows cannot bound the change any closer.
func (t Trend) SlopeInterval(level float64) (lo, hi float64) {
	np := len(t.slopes)
	if np == 0 {
		return 0, 0
	}
	c := math.Sqrt2 * math.Erfinv(level) * math.Sqrt(t.varS)
	m1, m2 := (float64(np)-c)/2, (float64(np)+c)/2
	// 1-based ranks, rounded outwards and kept within the slopes.
	r1 := min(max(int(math.Floor(m1)), 1), np)
	r2 := min(max(int(math.Ceil(m2))+1, 1), np)
	return t.slopes[r1-1], t.slopes[r2-1]
}

// mkVariance is Var(S) under no trend, less the ties' share:
// [n(n−1)(2n+5) − Σ t(t−1)(2t+5)] / 18 over groups of t equal values.
func mkVariance(xs []float64) float64 {
	n := float64(len(xs))
	v := n * (n - 1) * (2*n + 5)
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		if g := float64(j - i); g > 1 {
			v -= g * (g - 1) * (2*g + 5)
		}
		i = j
	}
	return v / 18
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// DriftOptions say when a trend counts as drift. The zero value of each
// field means its default.
type DriftOptions struct {
	// Alpha is the significance level (default 0.05).
	Alpha float64
	// MinChange is the smallest relative change over the run that counts
	// (default 0.10): over a day even a 1% trend is significant, and not
	// worth waking anyone for.
	MinChange float64
	// Absolute measures the change in the figure's own unit rather than
	// relative to its start: for figures that start at 0, like a failure
	// rate (then MinChange is in that unit too).
	Absolute bool
	// Tests is how many tests share Alpha (default 1): each is run at
	// Alpha / Tests and its interval drawn at 1 − Alpha / Tests
	// (Bonferroni), so the chance that any of them flags a figure that
	// did not move stays under Alpha.
	Tests int
}

// DefaultDrift holds each DriftOptions default, for the zero fields and
// for the soak command's flags.
var DefaultDrift = DriftOptions{Alpha: 0.05, MinChange: 0.10, Tests: 1}

func (o DriftOptions) withDefaults() DriftOptions {
	o.Alpha = cmp.Or(o.Alpha, DefaultDrift.Alpha)
	o.MinChange = cmp.Or(o.MinChange, DefaultDrift.MinChange)
	o.Tests = max(o.Tests, DefaultDrift.Tests)
	return o
}

// testAlpha is the level each of the Tests is run at.
func (o DriftOptions) testAlpha() float64 { return o.Alpha / float64(o.Tests) }

// DriftVerdict is the drift test of one windowed figure.
type DriftVerdict struct {
	Metric string
	// Tested is false when there were too few windows to test (Verdict
	// says why and what would test it); every figure below is then 0.
	Tested bool
	// Change is the fitted change over the soak (fittedChange): relative
	// (0.38: rose 38%) or, with Absolute, in the figure's unit; ChangeLow
	// and ChangeHigh bound it at Level (SlopeInterval).
	Change, ChangeLow, ChangeHigh float64
	// Level is the interval's level: 1 − Alpha.
	Level float64
	P     float64
	// Alpha is the level this test was run at: DriftOptions.Alpha /
	// Tests.
	Alpha float64
	// Windows is how many windows were tested.
	Windows int
	// Significant: the trend test rejects "no trend" at Alpha.
	Significant bool
	// Drifted: significant and at least MinChange.
	Drifted bool
	Verdict string
}

// Drift tests one figure measured per equally spaced window (e.g. the
// throughput per 5 minutes) over span for a trend: DriftAt with each
// window at its midpoint.
func Drift(metric string, windows []float64, span time.Duration, o DriftOptions) DriftVerdict {
	ts := make([]float64, len(windows))
	for i := range ts {
		ts[i] = (float64(i) + 0.5) * span.Seconds() / float64(len(windows))
	}
	return DriftAt(metric, ts, windows, span, o)
}

// DriftAt tests one figure measured per window, xs at ts seconds from
// the soak's start (each window's midpoint), for a trend (Mann-Kendall at
// Alpha / Tests), estimates its change over the whole span with an
// interval, and says so in words: "P99 TTFT rose 38% over 6h0m0s (95% CI
// +21% to +55%), significant (Mann-Kendall p = 0.0012, α = 0.05, 72
// windows)".
//
// The change is Sen's slope × span: the fitted line from the soak's start
// to its end, half a window past the first and last midpoints, so a
// figure that doubles over the soak reads about +100% whatever the
// number of windows (fittedChange).
func DriftAt(metric string, ts, xs []float64, span time.Duration, o DriftOptions) DriftVerdict {
	o = o.withDefaults()
	v := DriftVerdict{Metric: metric, P: 1, Windows: len(xs)}
	if len(xs) < MinTrendWindows {
		v.Verdict = fmt.Sprintf("%s: %d windows are too few to test a trend (at least %d): use a shorter window or a longer run",
			metric, len(xs), MinTrendWindows)
		return v
	}
	v.Tested, v.Alpha, v.Level = true, o.testAlpha(), 1-o.testAlpha()
	v.P, v.Change, v.ChangeLow, v.ChangeHigh = fittedChange(ts, xs, span, v.Level, o.Absolute)
	v.Significant = v.P < v.Alpha
	v.Drifted = v.Significant && math.Abs(v.Change) >= o.MinChange
	v.Verdict = driftWords(v, o, span)
	return v
}

// fittedChange is the Mann-Kendall p-value of xs and the fitted change
// over span with its interval at level (SlopeInterval).
//
// A relative change is fitted on the values' logarithms, exp(slope × span)
// − 1: the slope is then a rate of growth, and its interval bounds the
// change without the error of a fitted start to divide by (dividing a
// linear slope's bounds by the estimated start held a planted +100% in
// only 86% of 98.3% intervals). The ranks, and so p, are the same on
// either scale. A series with a value ≤ 0 (a window with no successes)
// has no logarithm: its change is the linear slope × span ÷ the fitted
// line at the start, no lower than −100%, and its interval ignores the
// start's own error.
func fittedChange(ts, xs []float64, span time.Duration, level float64, absolute bool) (p, change, lo, hi float64) {
	if !absolute && slices.Min(xs) > 0 {
		logs := make([]float64, len(xs))
		for i, x := range xs {
			logs[i] = math.Log(x)
		}
		t := MannKendallAt(ts, logs)
		lo, hi := t.SlopeInterval(level)
		growth := func(slope float64) float64 { return math.Expm1(slope * span.Seconds()) }
		return t.P, growth(t.Slope), growth(lo), growth(hi)
	}
	t := MannKendallAt(ts, xs)
	lo, hi = t.SlopeInterval(level)
	scale := span.Seconds()
	if start := t.Start - t.Slope*ts[0]; !absolute {
		scale = 0
		if start > 0 {
			scale = span.Seconds() / start
		}
	}
	if absolute {
		return t.P, t.Slope * scale, lo * scale, hi * scale
	}
	// A figure that is never negative cannot fall by more than all of it,
	// however far the line runs past 0.
	return t.P, max(t.Slope*scale, -1), max(lo*scale, -1), max(hi*scale, -1)
}

// driftWords is a tested drift verdict in words, always with the change
// and its interval: a trend too small or too noisy to be significant
// still says how large a change the soak could not rule out.
func driftWords(v DriftVerdict, o DriftOptions, span time.Duration) string {
	amount := func(x float64) string {
		if o.Absolute {
			return fmt.Sprintf("%+.3g", x)
		}
		pct := math.Round(x * 100)
		if pct == 0 {
			pct = 0 // not "-0%"
		}
		return fmt.Sprintf("%+.0f%%", pct)
	}
	least := fmt.Sprintf("%.0f%%", o.MinChange*100)
	size := strings.TrimPrefix(amount(math.Abs(v.Change)), "+")
	if o.Absolute {
		size, least = "by "+size, fmt.Sprintf("%.3g", o.MinChange)
	}
	interval := fmt.Sprintf("%s CI %s to %s", percentText(v.Level), amount(v.ChangeLow), amount(v.ChangeHigh))
	test := fmt.Sprintf("Mann-Kendall p = %.2g, α = %s, %d windows", v.P, alphaText(o), v.Windows)
	dir := "rose"
	if v.Change < 0 {
		dir = "fell"
	}
	switch {
	case v.Drifted:
		return fmt.Sprintf("%s %s %s over %s (%s), significant (%s)", v.Metric, dir, size, span, interval, test)
	case v.Significant:
		return fmt.Sprintf("%s %s %s over %s (%s): significant (%s) but under the %s that counts as drift", v.Metric, dir, size, span, interval, test, least)
	default:
		return fmt.Sprintf("%s: no significant trend over %s: change %s (%s; %s)", v.Metric, span, amount(v.Change), interval, test)
	}
}

// alphaText is the test's level as the user set it: "0.05", or "0.05/3"
// when three tests share it.
func alphaText(o DriftOptions) string {
	if o.Tests > 1 {
		return fmt.Sprintf("%.3g/%d", o.Alpha, o.Tests)
	}
	return fmt.Sprintf("%.3g", o.Alpha)
}

// percentText is a level as a percentage: "95%", "98.3%".
func percentText(level float64) string {
	return strconv.FormatFloat(math.Round(level*1000)/10, 'f', -1, 64) + "%"
}
