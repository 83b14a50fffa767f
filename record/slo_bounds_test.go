package record

import (
	"strings"
	"testing"
)

// TestParseBounds: per-request bounds in the threshold language, the
// long and short metric names, durations and plain milliseconds, several
// bounds to an expression, and a clear refusal for a percentile, an
// unknown metric, a wrong operator, a bad or out-of-range limit and a
// metric bounded twice.
func TestParseBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		exprs []string
		want  SLO
		err   string
	}{
		{exprs: nil, want: SLO{}},
		{exprs: []string{"ttft <= 500ms"}, want: SLO{TTFTMs: 500}},
		{exprs: []string{"TTFT_ms<=500", "tpot < 0.05s"}, want: SLO{TTFTMs: 500, TPOTMs: 50}},
		{exprs: []string{"ttft <= 2s, e2e_ms <= 30000,"}, want: SLO{TTFTMs: 2000, E2EMs: 30000}},
		{exprs: []string{"ttft.p99 <= 2s"}, err: "no percentile"},
		{exprs: []string{"itl <= 50ms"}, err: `"itl" is not ttft, ttfo, tpot or e2e`},
		{exprs: []string{"ttft >= 5ms"}, err: "want METRIC <= LIMIT"},
		{exprs: []string{"ttft 500"}, err: "want METRIC <= LIMIT"},
		{exprs: []string{"ttft <= soon"}, err: "not a finite number"},
		{exprs: []string{"ttft <= 0"}, err: "not a bound from 0 to a day"},
		{exprs: []string{"ttft <= 48h"}, err: "not a bound from 0 to a day"},
		{exprs: []string{"ttft <= 1s", "ttft_ms <= 900"}, err: `already bounded by "ttft <= 1s"`},
	}
	for _, tt := range tests {
		got, err := ParseBounds(tt.exprs)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseBounds(%q) error %v, want one containing %q", tt.exprs, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("ParseBounds(%q) = %+v, %v; want %+v", tt.exprs, got, err, tt.want)
		}
	}
}
