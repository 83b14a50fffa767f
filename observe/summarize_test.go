package observe

import (
	"testing"

	"github.com/inferload/inferload/record"
)

// steady builds n one-second samples of source, each with vals(i).
func steady(source string, n int, vals func(i int) map[string]float64) []Sample {
	return steadyEvery(source, n, 1e6, vals)
}

// steadyEvery builds n samples of source everyUS apart.
func steadyEvery(source string, n int, everyUS int64, vals func(i int) map[string]float64) []Sample {
	out := make([]Sample, n)
	for i := range out {
		at := int64(i)*everyUS + everyUS/2
		out[i] = Sample{TS: at / 1e6, TimeUS: at, Source: source, Values: vals(i)}
	}
	return out
}

// TestSummarizeKeepsMeasuredWindow: warm-up samples do not count, gaps are
// counted per source.
func TestSummarizeKeepsMeasuredWindow(t *testing.T) {
	t.Parallel()
	samples := steady("srv", 6, func(i int) map[string]float64 { return map[string]float64{QueueDepth: float64(i)} })
	samples[4].Gap, samples[4].Values = true, nil
	s := &record.Summary{}
	Summarize(samples, record.RunInfo{WarmupEndUS: 2e6, EndUS: 10e6}, s)
	src := s.Server.Sources[0]
	q := src.Series[QueueDepth]
	// Seconds 2, 3 and 5 are measured data (4 is a gap): mean 10/3, max 5, last 5.
	if src.Samples != 4 || src.Gaps != 1 || q.Max != 5 || q.Last != 5 || q.Mean != 10.0/3 {
		t.Fatalf("source = %+v", src)
	}
	// Summarising passes no verdict: hints and warnings are analyze's.
	if s.Hints != nil || s.Warnings != nil {
		t.Errorf("hints %v, warnings %q: want none from Summarize", s.Hints, s.Warnings)
	}
}
