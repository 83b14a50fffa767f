package analyze

import (
	"slices"
	"testing"

	"github.com/inferload/inferload/record"
)

// TestServerTimeHints: the two server-time rules on summaries built to be
// on each side of their thresholds.
func TestServerTimeHints(t *testing.T) {
	t.Parallel()
	st := func(n int64, queue *float64, prefill, decode, outside float64) *record.ServerTimeSummary {
		s := &record.ServerTimeSummary{Requests: n, PrefillMS: record.Stats{P50: prefill}, DecodeMS: record.Stats{P50: decode},
			OutsideMS: record.Stats{P50: outside}}
		if queue != nil {
			s.QueueMS = &record.Stats{Count: n, P50: *queue}
		}
		return s
	}
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		st   *record.ServerTimeSummary
		ttft float64
		want []string
	}{
		// 1.2 s queued against 80 ms prefill + 900 ms decode: queueing dominates.
		{"queue dominates", st(100, f(1200), 80, 900, 5), 1290, []string{"queue_dominates"}},
		// The queue is long but work is longer: the server is busy working, not waiting.
		{"work dominates", st(100, f(700), 80, 900, 5), 790, nil},
		// A short queue is no hint, whatever its share.
		{"short queue", st(100, f(60), 10, 30, 5), 75, nil},
		// 864 ms of a 900 ms TTFT before prefill, no queue reported (llama.cpp at 8 users on 4 slots).
		{"outside, no queue reported", st(100, nil, 36, 2000, 864), 900, []string{"outside_server"}},
		// Outside time under half the TTFT.
		{"outside small share", st(100, nil, 300, 2000, 120), 420, nil},
		// Outside time over half, but tiny.
		{"outside tiny", st(100, nil, 10, 200, 30), 40, nil},
		// Four timed requests cannot back a median: no verdict.
		{"too few", st(4, f(1200), 80, 900, 864), 2000, nil},
		// No server timings at all.
		{"none", nil, 900, nil},
	}
	for _, tt := range tests {
		s := &record.Summary{ServerTime: tt.st, Metrics: record.Metrics{TTFT: record.Stats{P50: tt.ttft}}}
		got, _ := hintRules(s)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: hints %v, want %v", tt.name, got, tt.want)
		}
	}
}

// hintRules are the rules of the hints s gets, in order, and the last
// hint's message.
func hintRules(s *record.Summary) (rules []string, msg string) {
	for _, h := range Hints(nil, s, record.LoadTrend{}) {
		rules = append(rules, h.Rule)
		msg = h.Message
	}
	return rules, msg
}
