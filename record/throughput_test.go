package record

import (
	"math"
	"testing"
)

func TestRateCountsCompletionsInSpan(t *testing.T) {
	t.Parallel()
	a := NewAggregate()
	// Two successes completing at 1.05 s and 1.95 s (100 tokens each), one
	// at 3.05 s, and a failure at 1.5 s that must not count.
	for _, done := range []int64{1_050_000, 1_950_000, 3_050_000} {
		a.Add(&Result{SendUS: done - 50_000, E2EUS: 50_000, OutputTokens: 100, TokenSource: TokensUsage})
	}
	a.Add(&Result{SendUS: 1_400_000, E2EUS: 100_000, Error: ErrHTTP5xx})
	tests := []struct {
		from, to         int64
		wantReq, wantTok float64
	}{
		{1_000_000, 2_000_000, 2, 200}, // both completions of second 1
		{0, 4_000_000, 0.75, 75},       // all three over 4 s
		{2_000_000, 3_000_000, 0, 0},   // a quiet second
		{3_000_000, 3_000_000, 0, 0},   // an empty span
	}
	for _, tt := range tests {
		req, tok := a.Rate(tt.from, tt.to)
		if math.Abs(req-tt.wantReq) > 1e-9 || math.Abs(tok-tt.wantTok) > 1e-9 {
			t.Errorf("Rate(%d, %d) = %.3f req/s %.1f tok/s, want %.3f %.1f", tt.from, tt.to, req, tok, tt.wantReq, tt.wantTok)
		}
	}
}

func TestMeterIgnoresImpossibleTimes(t *testing.T) {
	t.Parallel()
	var m throughputMeter
	// A record claiming to finish a year after the start is not metered
	// (and allocates nothing); one before the start lands in slot 0.
	m.add(&Result{SendUS: 365 * 24 * 3600 * 1e6, OutputTokens: 5})
	if len(m.slots) != 0 {
		t.Fatalf("a far-future record grew the meter to %d slots", len(m.slots))
	}
	m.add(&Result{SendUS: -5, E2EUS: 1, OutputTokens: 5})
	if req, out, _ := m.over(0, meterSlotUS); req != 1 || out != 5 {
		t.Errorf("over first slot = %v req %v tok, want 1 and 5", req, out)
	}
}
