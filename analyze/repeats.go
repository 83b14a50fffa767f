package analyze

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// RepeatFigure is one figure over repeated runs of one scenario: each
// run's own value, their mean with the confidence interval of that mean
// (Student's t on the run values, which carries the run-to-run variance
// as well as each run's sampling noise), and the runs' coefficient of
// variation, the run-to-run spread a comparison of single runs cannot see.
type RepeatFigure struct {
	Metric string    `json:"metric"`
	Values []float64 `json:"values"`
	Mean   float64   `json:"mean"`
	Low    float64   `json:"low"`
	High   float64   `json:"high"`
	// CV is the runs' standard deviation ÷ |mean|; 0 when the mean is 0.
	CV float64 `json:"cv"`
}

// repeatMetrics are the figures Repeats reports, in display order.
var repeatMetrics = []string{"ttft_ms.p50", "ttft_ms.p99", "tpot_ms.p50", "itl_ms.p99", "e2e_ms.p50", "e2e_ms.p99",
	"output_tokens_per_s", "requests_per_s", "failure_rate"}

// Repeats summarises at least two runs of one scenario: each figure every
// run has (a non-streamed run has no TTFT), with its mean's interval at
// confidence (DefaultConfidence when outside (0, 1)).
func Repeats(runs []*RunSamples, confidence float64) []RepeatFigure {
	if len(runs) < 2 {
		return nil
	}
	z := repeatT(len(runs), confidence)
	units := unitSet{runs: runs}
	var out []RepeatFigure
	for _, metric := range repeatMetrics {
		values, ok := units.unitValues(metric, 1)
		if !ok {
			continue
		}
		out = append(out, repeatFigure(metric, values, z))
	}
	return out
}

// repeatT is Student's t quantile for the two-sided interval at
// confidence (DefaultConfidence when outside (0, 1)) of a mean of n runs.
func repeatT(n int, confidence float64) float64 {
	if confidence <= 0 || confidence >= 1 {
		confidence = DefaultConfidence
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}
	return t.Quantile(1 - (1-confidence)/2)
}

// repeatFigure is values' mean with its interval (t: repeatT) and CV.
func repeatFigure(metric string, values []float64, t float64) RepeatFigure {
	mean := meanOf(values)
	sd := math.Sqrt(variance(values))
	half := t * sd / math.Sqrt(float64(len(values)))
	f := RepeatFigure{Metric: metric, Values: values, Mean: mean, Low: mean - half, High: mean + half}
	if mean != 0 {
		f.CV = sd / math.Abs(mean)
	}
	return f
}
