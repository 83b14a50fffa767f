package analyze

// This file: the second check every significant figure must pass, on the
// variance between runs (docs/compare.md, "Run-to-run variance"). A
// figure's own test treats its values as independent draws, but under
// load neighbouring requests share a queue and a busy host shifts a
// whole stretch of them: two runs of one scenario differ by more than
// their values' spread says. With repeats the runs themselves are the
// units; with one run a side, contiguous batches of it are, which sees
// the serial correlation and slow drift inside a run (batch means),
// though not a shift that lasts a whole run.

import (
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/inferload/inferload/record"
)

const (
	// TestBetweenRuns is RunsCheck.Test with repeats: Welch's t test on
	// each run's own value of the figure.
	TestBetweenRuns = "between-runs-t"
	// TestBatchMeans is RunsCheck.Test with one run a side: Welch's t
	// test on the figure of each of DefaultBatches contiguous batches of
	// each run, in completion order.
	TestBatchMeans = "batch-means-t"
	// ChangeCannotTell is Delta.Change for a figure whose own test found
	// a difference that the variance between runs (or batches) can
	// explain: it is neither worse nor better, and cannot regress.
	ChangeCannotTell = "cannot tell"
	// DefaultBatches is how many batches a run is cut into when each
	// side has one run.
	DefaultBatches = 8
)

// RunsCheck is a figure's second test, on units (runs or batches): the
// difference of the units' mean values with Welch's t interval at the
// delta's level, and its p-value (Bonferroni-adjusted as the delta's).
type RunsCheck struct {
	Test string `json:"test"`
	// Diff is the current units' mean − the baseline units' mean;
	// DiffLow and DiffHigh bound it at the delta's Level.
	Diff     float64 `json:"diff"`
	DiffLow  float64 `json:"diff_low"`
	DiffHigh float64 `json:"diff_high"`
	PValue   float64 `json:"p_value"`
	// DF is the t test's degrees of freedom (Welch–Satterthwaite).
	DF float64 `json:"df"`
	// BaselineUnits and CurrentUnits are how many runs or batches each
	// side had.
	BaselineUnits int `json:"baseline_units"`
	CurrentUnits  int `json:"current_units"`
	// TooFew: a batch (or run) held too few values to bound the
	// percentile, so the check could not be made; a difference the
	// figure's own test found then cannot be told from run-to-run noise.
	TooFew bool `json:"too_few,omitempty"`
}

// unitSet is one side's units: runs (with repeats) or batches of its one
// run.
type unitSet struct {
	runs    []*RunSamples
	batches int // > 0: batches of runs[0]
	// pooled: comparer.pooled, the classes of each overall goodput row.
	pooled map[string][]string
}

// scopeOf is the Samples of a delta's scope ("" overall, "classes.NAME.").
func scopeOf(rs *RunSamples, prefix string) *Samples {
	if prefix == "" {
		return rs.Overall
	}
	return rs.Classes[strings.TrimSuffix(strings.TrimPrefix(prefix, "classes."), ".")]
}

// unitValues is the figure metric's value in each unit, and whether
// every unit held enough values to give it (minN, for a percentile).
func (u unitSet) unitValues(metric string, minN int) ([]float64, bool) {
	prefix, fig := splitMetric(metric)
	value := func(rs *RunSamples, lo, hi float64) (float64, bool) {
		switch {
		case fig == "output_tokens_per_s" || fig == "requests_per_s":
			perS := rs.RequestsPerS
			if fig == "output_tokens_per_s" {
				perS = rs.OutputTokensPerS
			}
			part := cut(perS, lo, hi)
			return meanOf(part), len(part) > 0
		case fig == "failure_rate" || fig == "accuracy":
			s := scopeOf(rs, prefix)
			if s == nil {
				return 0, false
			}
			flags := s.failedAt
			if fig == "accuracy" {
				flags = s.correctAt
			}
			part := cut(flags, lo, hi)
			return shareTrue(part), len(part) > 0
		case isGoodput(fig) && u.batches > 0:
			part := cut(orderedVerdicts(rs, metric, u.pooled[fig]), lo, hi)
			return shareTrue(part), len(part) > 0
		case isGoodput(fig):
			return runShare(rs, metric, u.pooled[fig])
		}
		name, pc := latencyFigure(fig)
		q, ok := record.PercentileQ(pc)
		s := scopeOf(rs, prefix)
		if !ok || s == nil {
			return 0, false
		}
		part := slices.Clone(cut(s.ordered(name), lo, hi))
		slices.Sort(part)
		return percentile(part, q), len(part) >= max(minN, 1)
	}
	var out []float64
	enough := true
	if u.batches > 0 {
		for i := range u.batches {
			v, ok := value(u.runs[0], float64(i)/float64(u.batches), float64(i+1)/float64(u.batches))
			out, enough = append(out, v), enough && ok
		}
		return out, enough
	}
	for _, rs := range u.runs {
		v, ok := value(rs, 0, 1)
		out, enough = append(out, v), enough && ok
	}
	return out, enough
}

// figureLen is how many values a run has of metric's figure: latency
// values, seconds of throughput, requests, or sessions or tasks (pooled:
// the classes of each overall goodput row).
func figureLen(rs *RunSamples, metric string, pooled map[string][]string) int {
	prefix, fig := splitMetric(metric)
	switch {
	case isGoodput(fig):
		return len(orderedVerdicts(rs, metric, pooled[fig]))
	case fig == "output_tokens_per_s" || fig == "requests_per_s":
		return len(rs.OutputTokensPerS)
	case fig == "failure_rate":
		if s := scopeOf(rs, prefix); s != nil {
			return len(s.failedAt)
		}
		return 0
	case fig == "accuracy":
		if s := scopeOf(rs, prefix); s != nil {
			return len(s.correctAt)
		}
		return 0
	}
	name, _ := latencyFigure(fig)
	if s := scopeOf(rs, prefix); s != nil {
		return len(s.ordered(name))
	}
	return 0
}

// latencyFigure splits a latency figure ("ttft_ms.p99",
// "nodes.plan.latency_ms.p90") into its metric and percentile: the
// percentile is the last part, as a node's metric has dots of its own.
func latencyFigure(fig string) (metric, pc string) {
	i := strings.LastIndexByte(fig, '.')
	if i < 0 {
		return fig, ""
	}
	return fig[:i], fig[i+1:]
}

// shareTrue is the share of flags that are set; 0 for none.
func shareTrue(flags []bool) float64 {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return float64(n) / float64(max(len(flags), 1))
}

// cut is the part of s from fraction lo to fraction hi of its length.
func cut[T any](s []T, lo, hi float64) []T {
	n := float64(len(s))
	return s[int(math.Round(lo*n)):int(math.Round(hi*n))]
}

// splitMetric splits "classes.NAME.ttft_ms.p99" into its scope prefix
// ("classes.NAME.") and figure ("ttft_ms.p99").
func splitMetric(metric string) (prefix, fig string) {
	if rest, ok := strings.CutPrefix(metric, "classes."); ok {
		if name, f, ok := strings.Cut(rest, "."); ok {
			return "classes." + name + ".", f
		}
	}
	return "", metric
}

// welch is Welch's t test of mean(cur) − mean(base) at level: the
// interval, the two-sided p and the degrees of freedom. A side with one
// unit has no spread of its own and borrows the other side's (the same
// scenario is assumed to vary as much on both sides).
func welch(base, cur []float64, level float64) (diff, lo, hi, p, df float64) {
	nb, nc := float64(len(base)), float64(len(cur))
	vb, vc := variance(base), variance(cur)
	switch {
	case len(base) < 2:
		vb = vc
	case len(cur) < 2:
		vc = vb
	}
	diff = meanOf(cur) - meanOf(base)
	se2 := vb/nb + vc/nc
	if se2 == 0 {
		if diff == 0 {
			return 0, 0, 0, 1, 1
		}
		return diff, diff, diff, 0, 1
	}
	df = se2 * se2 / (sq(vb/nb)/max(nb-1, 1) + sq(vc/nc)/max(nc-1, 1))
	if len(base) < 2 || len(cur) < 2 {
		df = max(nb, nc) - 1
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	se := math.Sqrt(se2)
	half := t.Quantile(1-(1-level)/2) * se
	p = 2 * t.CDF(-math.Abs(diff)/se)
	return diff, diff - half, diff + half, p, df
}

func sq(v float64) float64 { return v * v }

// variance is the sample variance (n − 1); 0 below two values.
func variance(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := meanOf(v)
	s := 0.0
	for _, x := range v {
		s += sq(x - m)
	}
	return s / float64(len(v)-1)
}

// runsCheck tests delta d's figure on the units of both sides and
// settles its change: a difference its own test found stands only when
// the units agree on it (significant the same way); otherwise it is
// ChangeCannotTell.
func (m comparer) runsCheck(d *Delta, base, cur unitSet) {
	if d.Change == ChangeTooShort {
		return
	}
	minN := 0
	if _, fig := splitMetric(d.Metric); strings.Contains(fig, "_ms.p") {
		q, _ := record.PercentileQ(fig[strings.LastIndex(fig, ".")+1:])
		minN = MinSamples(q, d.Level)
	}
	if base.batches > 0 {
		// As many batches as each run has values for (minN each, for a
		// percentile; 2 per-second values or requests at least).
		n := min(figureLen(base.runs[0], d.Metric, base.pooled), figureLen(cur.runs[0], d.Metric, cur.pooled))
		base.batches = min(base.batches, n/max(minN, 2))
		cur.batches = base.batches
	}
	bv, okB := base.unitValues(d.Metric, minN)
	cv, okC := cur.unitValues(d.Metric, minN)
	rc := &RunsCheck{Test: TestBetweenRuns, BaselineUnits: len(bv), CurrentUnits: len(cv)}
	if len(base.runs) == 1 && len(cur.runs) == 1 {
		rc.Test = TestBatchMeans
		okB = okB && base.batches >= 2
	}
	d.Runs = rc
	if !okB || !okC || len(bv)+len(cv) < 3 {
		rc.TooFew, rc.PValue = true, 1
	} else {
		var p float64
		rc.Diff, rc.DiffLow, rc.DiffHigh, p, rc.DF = welch(bv, cv, d.Level)
		rc.PValue = adjust(p, d.Family)
	}
	if d.Change != "worse" && d.Change != "better" {
		return
	}
	agrees := !rc.TooFew && rc.PValue < 1-m.opts.Confidence && (rc.DiffLow > 0) == (d.DiffLow > 0) && (rc.DiffLow > 0 || rc.DiffHigh < 0)
	if !agrees {
		d.Significant, d.Change = false, ChangeCannotTell
	}
}
