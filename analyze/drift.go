package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
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
	// Slope is Sen's slope: the median of (x_j − x_i)/(j − i), per window.
	Slope float64
	// Start is the fitted line's value at the first window.
	Start float64
}

// MinTrendWindows is the fewest windows a trend test can ever call
// significant at 5%: with 4, even a perfectly rising series has p ≈ 0.09.
const MinTrendWindows = 5

// MannKendall tests xs for a monotonic trend.
func MannKendall(xs []float64) Trend {
	n := len(xs)
	t := Trend{N: n, P: 1}
	if n < 2 {
		return t
	}
	slopes := make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d := xs[j] - xs[i]
			switch {
			case d > 0:
				t.S++
			case d < 0:
				t.S--
			}
			slopes = append(slopes, d/float64(j-i))
		}
	}
	t.Slope = median(slopes)
	t.Start = median(xs) - t.Slope*float64(n-1)/2
	sd := math.Sqrt(mkVariance(xs))
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
}

// DefaultDrift holds each DriftOptions default, for the zero fields and
// for the soak command's flags.
var DefaultDrift = DriftOptions{Alpha: 0.05, MinChange: 0.10}

func (o DriftOptions) withDefaults() DriftOptions {
	o.Alpha = cmp.Or(o.Alpha, DefaultDrift.Alpha)
	o.MinChange = cmp.Or(o.MinChange, DefaultDrift.MinChange)
	return o
}

// DriftVerdict is the drift test of one windowed figure.
type DriftVerdict struct {
	Metric string
	// Change is the fitted relative change from the first window to the
	// last (0.38: rose 38%).
	Change float64
	P      float64
	// Significant: the trend test rejects "no trend" at Alpha.
	Significant bool
	// Drifted: significant and at least MinChange.
	Drifted bool
	Verdict string
}

// Drift tests one figure measured per window (e.g. P99 TTFT per 5
// minutes) for a trend over span, and says so in words: "P99 TTFT rose 38%
// over 6h0m0s, significant (Mann-Kendall p = 0.0012)".
func Drift(metric string, windows []float64, span time.Duration, o DriftOptions) DriftVerdict {
	o = o.withDefaults()
	v := DriftVerdict{Metric: metric, P: 1}
	if len(windows) < MinTrendWindows {
		v.Verdict = fmt.Sprintf("%s: %d windows are too few to test a trend (at least %d): use a shorter window or a longer run",
			metric, len(windows), MinTrendWindows)
		return v
	}
	t := MannKendall(windows)
	v.P = t.P
	v.Change = t.Slope * float64(t.N-1)
	if !o.Absolute {
		v.Change = 0
		if t.Start > 0 {
			v.Change = t.Slope * float64(t.N-1) / t.Start
		}
	}
	v.Significant = t.P < o.Alpha
	v.Drifted = v.Significant && math.Abs(v.Change) >= o.MinChange
	dir := "rose"
	if v.Change < 0 {
		dir = "fell"
	}
	amount, least := fmt.Sprintf("%.0f%%", math.Abs(v.Change)*100), fmt.Sprintf("%.0f%%", o.MinChange*100)
	if o.Absolute {
		amount, least = fmt.Sprintf("by %.3g", math.Abs(v.Change)), fmt.Sprintf("%.3g", o.MinChange)
	}
	switch {
	case v.Drifted:
		v.Verdict = fmt.Sprintf("%s %s %s over %s, significant (Mann-Kendall p = %.2g)", metric, dir, amount, span, t.P)
	case v.Significant:
		v.Verdict = fmt.Sprintf("%s %s %s over %s: significant (p = %.2g) but under the %s that counts as drift", metric, dir, amount, span, t.P, least)
	default:
		v.Verdict = fmt.Sprintf("%s: no significant trend over %s (Mann-Kendall p = %.2g)", metric, span, t.P)
	}
	return v
}
