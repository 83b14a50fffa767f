package analyze

import (
	"math"
	"testing"
)

// TestRepeats: three runs whose TTFT medians are 90, 100 and 110 ms give
// a mean of 100 with the t interval 100 ± t(0.975, 2)·10/√3 and a CV of
// 10%; a figure a run lacks (no TPOT: nothing streamed twice) is left
// out; one run has no repeats to summarise.
func TestRepeats(t *testing.T) {
	t.Parallel()
	var runs []*RunSamples
	for _, v := range []float64{90, 100, 110} {
		rs := NewRunSamples("r")
		rs.Overall.TTFT = []float64{v}
		rs.Overall.failedAt = []bool{false}
		rs.OutputTokensPerS, rs.RequestsPerS = []float64{v}, []float64{1}
		runs = append(runs, rs)
	}
	got := map[string]RepeatFigure{}
	for _, f := range Repeats(runs, 0.95) {
		got[f.Metric] = f
	}
	ttft, ok := got["ttft_ms.p50"]
	half := 4.302652729749462 * 10 / math.Sqrt(3)
	if !ok || ttft.Mean != 100 || math.Abs(ttft.Low-(100-half)) > 1e-9 || math.Abs(ttft.High-(100+half)) > 1e-9 || math.Abs(ttft.CV-0.1) > 1e-12 {
		t.Errorf("ttft_ms.p50 %+v: want mean 100, interval 100 ± %.4f, CV 0.1", ttft, half)
	}
	if _, ok := got["tpot_ms.p50"]; ok {
		t.Error("tpot_ms.p50 reported though no run has a TPOT")
	}
	if f := got["requests_per_s"]; f.Low != 1 || f.High != 1 || f.CV != 0 {
		t.Errorf("requests_per_s %+v: identical runs, want a zero-width interval", f)
	}
	if Repeats(runs[:1], 0.95) != nil {
		t.Error("one run summarised as repeats")
	}
}
