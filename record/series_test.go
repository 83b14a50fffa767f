package record

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// done builds a successful closed-loop record that finished at doneUS.
func done(doneUS, ttftUS int64, out int) Result {
	return Result{SendUS: doneUS - 2*ttftUS, E2EUS: 2 * ttftUS, TTFTUS: ttftUS, Stream: true, OutputTokens: out, InputTokens: 10, TokenSource: TokensUsage}
}

// TestSeries feeds records and checks which windows are emitted, when, and
// with what figures. Latencies below 256 µs, or alone in their window, keep
// the coarse per-window histogram exact.
func TestSeries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		recs       []Result
		beforeEnd  []int64  // window starts emitted before Flush
		want       []Window // everything emitted, after Flush
		stragglers int64
	}{{
		// Two requests finishing in second 1: one window plus an empty second 0.
		name: "one busy second",
		recs: []Result{done(1_200_000, 100, 5), done(1_900_000, 200, 7)},
		want: []Window{
			{TS: 0},
			{TS: 1, Completed: 2, Succeeded: 2, OutputTokens: 12, InputTokens: 20, TTFTP50MS: 0.1, TTFTP99MS: 0.2, E2EP99MS: 0.4},
		},
	}, {
		// A finish at 8 s closes windows older than 8−5 = 3 s; the empty second 2 is emitted too.
		name:      "lag closes old windows",
		recs:      []Result{done(1_500_000, 100, 1), done(8_100_000, 100, 1)},
		beforeEnd: []int64{0, 1, 2},
		want: []Window{
			{TS: 0},
			{TS: 1, Completed: 1, Succeeded: 1, OutputTokens: 1, InputTokens: 10, TTFTP50MS: 0.1, TTFTP99MS: 0.1, E2EP99MS: 0.2},
			{TS: 2}, {TS: 3}, {TS: 4}, {TS: 5}, {TS: 6}, {TS: 7},
			{TS: 8, Completed: 1, Succeeded: 1, OutputTokens: 1, InputTokens: 10, TTFTP50MS: 0.1, TTFTP99MS: 0.1, E2EP99MS: 0.2},
		},
	}, {
		// Out-of-order arrival within the lag still lands in its window; one
		// arriving after its window was written is a straggler.
		name:       "late finishers",
		recs:       []Result{done(7_000_000, 100, 1), done(3_000_000, 100, 1), done(20_000_000, 100, 1), done(4_000_000, 100, 1)},
		beforeEnd:  []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14},
		stragglers: 1,
	}, {
		// Failures and warm-up count in their window; failures add no tokens or latency.
		name: "failures and warm-up",
		recs: []Result{
			{E2EUS: 300_000, Error: ErrHTTP5xx, OutputTokens: 50},
			withRes(done(500_000, 1000, 4), func(r *Result) { r.Warmup = true }),
		},
		want: []Window{{TS: 0, Completed: 2, Succeeded: 1, Failed: 1, Warmup: 1, OutputTokens: 4, InputTokens: 10, TTFTP50MS: 1, TTFTP99MS: 1, E2EP99MS: 2}},
	}, {
		// A record an hour and more past the last: the empty gap is skipped, not written.
		name:      "long gap skipped",
		recs:      []Result{done(500, 100, 1), done(5000_000_000, 100, 1)},
		beforeEnd: []int64{0},
		want: []Window{
			{TS: 0, Completed: 1, Succeeded: 1, OutputTokens: 1, InputTokens: 10, TTFTP50MS: 0.1, TTFTP99MS: 0.1, E2EP99MS: 0.2},
			{TS: 5000, Completed: 1, Succeeded: 1, OutputTokens: 1, InputTokens: 10, TTFTP50MS: 0.1, TTFTP99MS: 0.1, E2EP99MS: 0.2},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []Window
			s := NewSeries(func(w Window) { got = append(got, w) })
			for i := range tt.recs {
				s.Add(&tt.recs[i])
			}
			if diff := cmp.Diff(tt.beforeEnd, starts(got)); diff != "" {
				t.Errorf("emitted before Flush (-want +got):\n%s", diff)
			}
			s.Flush()
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("windows (-want +got):\n%s", diff)
				}
			}
			if err := contiguous(got); err != "" && tt.name != "long gap skipped" {
				t.Error(err)
			}
			if s.Stragglers() != tt.stragglers {
				t.Errorf("stragglers = %d, want %d", s.Stragglers(), tt.stragglers)
			}
		})
	}
}

func starts(ws []Window) []int64 {
	var out []int64
	for _, w := range ws {
		out = append(out, w.TS)
	}
	return out
}

func contiguous(ws []Window) string {
	for i, w := range ws {
		if w.TS != int64(i) {
			return "windows not contiguous from 0"
		}
	}
	return ""
}

// TestSeriesBoundedMemory: a long steady run keeps only the lag's worth of
// windows open and recycles their histograms.
func TestSeriesBoundedMemory(t *testing.T) {
	t.Parallel()
	n := 0
	s := NewSeries(func(Window) { n++ })
	for ms := int64(0); ms < 600_000; ms += 50 {
		r := done(ms*1000+1000, 300, 2)
		s.Add(&r)
		if len(s.open) > SeriesLagS+2 || len(s.open)+len(s.free) > SeriesLagS+3 {
			t.Fatalf("at %d ms: %d open, %d free windows", ms, len(s.open), len(s.free))
		}
	}
	s.Flush()
	if n != 600 {
		t.Errorf("emitted %d windows, want 600", n)
	}
}

func BenchmarkSeriesAdd(b *testing.B) {
	s := NewSeries(func(Window) {})
	r := done(0, 120_000, 128)
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		r.SendUS = i * 100 // 10 000 completions per second
		i++
		s.Add(&r)
	}
}
