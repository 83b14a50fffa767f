package analyze

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Precision is the stop rule of repeated runs (run --repeat N
// --precision P): run until the mean of every named figure is known to
// within ±Rel of itself, at most N runs.
//
// The rule: from MinRepeatsToStop runs on, stop once every figure in
// Metrics that the runs have holds its confidence interval's half-width
// within Rel × |mean| (a figure whose mean is 0 only when the half-width
// is 0 too). Stopping on a width that was itself estimated from few runs
// makes the final interval a little optimistic (a run of low spread ends
// the repeats early); TRUTH.md states how often the interval at the stop
// still holds the true mean, measured on runs drawn from known
// distributions (TestPrecisionStopCoverage).
type Precision struct {
	// Rel is the half-width wanted, relative to the mean (0.05: ±5%).
	Rel float64
	// Metrics are the figures the rule watches (repeatMetrics' names).
	Metrics []string
}

// MinRepeatsToStop is the fewest runs the rule stops at: with two runs
// Student's t has one degree of freedom and a half-width of 12.7 standard
// deviations of the mean, so an interval narrow by chance means nothing.
const MinRepeatsToStop = 3

// DefaultPrecisionMetrics are the figures watched when none are named:
// the medians and the throughput, which a few runs pin down; a P99 moves
// with every slow stretch and would keep the repeats going to the limit.
var DefaultPrecisionMetrics = []string{"output_tokens_per_s", "ttft_ms.p50", "e2e_ms.p50"}

// ParsePrecisionMetrics reads a comma-separated list of repeat figures.
func ParsePrecisionMetrics(s string) ([]string, error) {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(repeatMetrics, f) {
			return nil, fmt.Errorf("%q is not a repeated figure (one of %s)", f, strings.Join(repeatMetrics, ", "))
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no figure named (one of %s)", strings.Join(repeatMetrics, ", "))
	}
	return out, nil
}

// PrecisionCheck is the rule's answer after some runs.
type PrecisionCheck struct {
	// Met is true when the runs may stop.
	Met bool `json:"met"`
	// Runs is how many runs were judged.
	Runs int `json:"runs"`
	// Rel is the half-width wanted.
	Rel float64 `json:"rel"`
	// Widths is each watched figure's half-width relative to its mean,
	// in Metrics' order; figures the runs do not have are left out.
	Widths []FigureWidth `json:"widths"`
}

// FigureWidth is one watched figure's relative half-width.
type FigureWidth struct {
	Metric string  `json:"metric"`
	Rel    float64 `json:"rel"`
}

// Check judges figures (Repeats over runs runs).
func (p Precision) Check(runs int, figures []RepeatFigure) PrecisionCheck {
	c := PrecisionCheck{Runs: runs, Rel: p.Rel}
	for _, m := range p.Metrics {
		i := slices.IndexFunc(figures, func(f RepeatFigure) bool { return f.Metric == m })
		if i < 0 {
			continue
		}
		c.Widths = append(c.Widths, FigureWidth{Metric: m, Rel: relHalfWidth(figures[i])})
	}
	c.Met = runs >= MinRepeatsToStop && len(c.Widths) > 0 &&
		!slices.ContainsFunc(c.Widths, func(w FigureWidth) bool { return w.Rel > p.Rel })
	return c
}

// relHalfWidth is f's interval half-width over |mean|.
func relHalfWidth(f RepeatFigure) float64 {
	half := (f.High - f.Low) / 2
	switch {
	case half <= 0:
		return 0
	case f.Mean == 0:
		// Every repeated figure is non-negative, so a zero mean has no
		// spread; were one signed, no width relative to 0 would do.
		return math.MaxFloat64
	}
	return half / math.Abs(f.Mean)
}
