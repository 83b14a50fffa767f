package summary

import (
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// TestWindowerCutsByCompletion: records fall into windows by completion
// time from the end of warm-up; the windows a run's end asks for are the
// first n, padded with empty ones when the last had no completions, and
// the drain after them (completions past the measured span) counts in
// none of them.
func TestWindowerCutsByCompletion(t *testing.T) {
	t.Parallel()
	done := func(doneUS int64, ok bool) *record.Result {
		r := &record.Result{Stream: true, SendUS: doneUS - 100, TTFTUS: 40, E2EUS: 100}
		if !ok {
			r.Error = record.ErrHTTP5xx
		}
		return r
	}
	w := newWindower(1000, time.Millisecond) // windows of 1000 µs from 1000 µs
	for _, r := range []*record.Result{
		done(500, true),   // in warm-up: no window
		done(1100, true),  // window 0
		done(1900, false), // window 0, failed
		done(3500, true),  // window 2 (window 1 empty)
		done(4200, true),  // window 3: past a 3-window span, the drain
	} {
		w.add(r)
	}
	got := w.windows(3)
	if len(got) != 3 {
		t.Fatalf("%d windows, want 3", len(got))
	}
	want := []struct {
		requests int64
		failRate float64
	}{{2, 0.5}, {0, 0}, {1, 0}}
	for i, ww := range want {
		if got[i].Requests != ww.requests || got[i].FailureRate != ww.failRate || got[i].StartS != float64(1000+1000*i)/1e6 {
			t.Errorf("window %d: %+v, want %d requests, failure rate %v", i, got[i], ww.requests, ww.failRate)
		}
	}
	// A span longer than the completions: empty windows after them.
	w = newWindower(0, time.Millisecond)
	w.add(done(100, true))
	if got := w.windows(4); len(got) != 4 || got[0].Requests != 1 || got[3].Requests != 0 {
		t.Errorf("padded windows: %+v", got)
	}
	if got := newWindower(0, time.Millisecond).windows(0); got == nil || len(got) != 0 {
		t.Errorf("no windows: %#v, want an empty list (summary.json writes [])", got)
	}
}

// TestWindowBacking: each window says the highest percentile its own
// values back (5 for P50, 59 for P95, 299 for P99 at 95%), so a window's
// P99 from fewer than 299 values is marked as such.
func TestWindowBacking(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		streamed  int // successful streamed requests in the window
		plain     int // successful requests without a stream (E2E only)
		ttft, e2e string
	}{
		// 4 values back nothing.
		{"four", 4, 0, "none", "none"},
		// 298 values: one short of a P99, a P95 backed.
		{"one short of p99", 298, 0, "p95", "p95"},
		// 299 values back the P99 exactly.
		{"p99", 299, 0, "p99", "p99"},
		// Unstreamed replies add E2E values and no TTFT ones.
		{"e2e only", 5, 294, "p50", "p99"},
	}
	for _, tc := range tests {
		w := newWindower(0, time.Second)
		for i := range tc.streamed + tc.plain {
			w.add(&record.Result{Stream: i < tc.streamed, SendUS: int64(i), TTFTUS: 40, E2EUS: 100})
		}
		got := w.windows(1)[0]
		if got.TTFTBacked != tc.ttft || got.E2EBacked != tc.e2e {
			t.Errorf("%s: backed ttft %q e2e %q, want %q %q", tc.name, got.TTFTBacked, got.E2EBacked, tc.ttft, tc.e2e)
		}
	}
}
