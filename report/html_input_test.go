package report

import (
	"testing"

	"github.com/inferload/inferload/record"
)

// inputRecords are two populations of streamed successes, 100-token and
// 2 000-token prompts, with TTFTs spread across several ~26%-wide display
// bins, plus warm-up records, failures and a non-streamed reply in the same
// length bins with TTFTs far off, which no TTFT figure may count.
func inputRecords() []*record.Result {
	var out []*record.Result
	add := func(prompt int, ttftUS int64, mod func(*record.Result)) {
		r := &record.Result{ID: uint64(len(out)), SendUS: 11e6 + int64(len(out))*10_000, Stream: true,
			TTFTUS: ttftUS, E2EUS: ttftUS + 50_000, EventsUS: []int64{ttftUS, ttftUS + 50_000}, OutputTokens: 2,
			InputTokens: prompt, PromptTokensSent: prompt, TokenSource: record.TokensUsage}
		if mod != nil {
			mod(r)
		}
		out = append(out, r)
	}
	for i := range int64(100) {
		add(100, 100_000+i*3_000, nil)    // 100 ms … 397 ms
		add(2000, 1_000_000+i*7_000, nil) // 1 s … 1.693 s
	}
	for _, prompt := range []int{100, 2000} {
		add(prompt, 3_000_000, func(r *record.Result) { r.Warmup, r.SendUS = true, 0 })
		add(prompt, 3_000_000, func(r *record.Result) { r.Error = record.ErrHTTP5xx })
		add(prompt, 3_000_000, func(r *record.Result) { r.Stream = false })
	}
	return out
}

// TestInputTTFTIsSummaryFigure: the "TTFT against input length" chart
// prints, for each length bin, the percentiles of record's histogram of
// the bin's measured streamed successes, the very figures summary.json
// carries for the same requests (here each length bin is alone in its
// input bucket), not a guess at the middle of a 26%-wide display bin
// (which read 354.8 ms for a P99 of 394 ms).
func TestInputTTFTIsSummaryFigure(t *testing.T) {
	t.Parallel()
	recs := inputRecords()
	agg := record.NewAggregate()
	d := NewDigest()
	for _, r := range recs {
		agg.Add(r)
		d.Add(r)
	}
	s := agg.Summary(record.RunInfo{Mode: record.ModeClosed, WarmupEndUS: 10e6, EndUS: 20e6})
	// Default buckets: ≤256 holds the 100-token prompts, ≤4096 the 2 000.
	short, long := s.InputBuckets[0].Metrics.TTFT, s.InputBuckets[2].Metrics.TTFT
	if short.Count != 100 || long.Count != 100 {
		t.Fatalf("buckets hold %d and %d TTFTs, want 100 each", short.Count, long.Count)
	}
	c := findChart(t, buildPage(&HTMLInput{Summary: s, Digest: d}), "input-ttft")
	if len(c.X) != 2 {
		t.Fatalf("%d length bins, want 2", len(c.X))
	}
	want := map[string][2]float64{
		"TTFT p50": {short.P50, long.P50},
		"TTFT p99": {short.P99, long.P99},
		"requests": {float64(short.Count), float64(long.Count)},
	}
	for _, l := range c.Series {
		w, ok := want[l.Label]
		if !ok {
			t.Errorf("unexpected series %q", l.Label)
			continue
		}
		for i := range w {
			if l.Values[i] == nil || *l.Values[i] != w[i] {
				t.Errorf("%s of bin %d = %v, want summary.json's %v", l.Label, i, deref(l.Values[i]), w[i])
			}
		}
		delete(want, l.Label)
	}
	for label := range want {
		t.Errorf("chart lacks %q", label)
	}
}

// findChart is the chart with id on page p.
func findChart(t *testing.T, p *page, id string) chart {
	t.Helper()
	for _, c := range p.Data.Charts {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("page has no chart %q", id)
	return chart{}
}

func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}
