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
	// A record claiming to finish two years after the start is not
	// metered (and allocates nothing); one before the start lands in slot 0.
	m.add(&Result{SendUS: 2 * 365 * 24 * 3600 * 1e6, OutputTokens: 5})
	if len(m.m.head)+len(m.m.tail) != 0 {
		t.Fatalf("a far-future record grew the meter to %d values", len(m.m.head)+len(m.m.tail))
	}
	m.add(&Result{SendUS: -5, E2EUS: 1, OutputTokens: 5})
	if req, out, _ := m.over(0, meterSlotUS); req != 1 || out != 5 {
		t.Errorf("over first slot = %v req %v tok, want 1 and 5", req, out)
	}
}

// Past the first hour the meter folds all but the latest hour or two into
// one sum: memory stays bounded over a long run, and a window whose edges lie
// in the fine parts sums exactly what a meter of fine slots would.
func TestSlotMeterFoldsTheMiddle(t *testing.T) {
	t.Parallel()
	var m flopMeter
	const hour = int64(3600 * 1e6)
	// one unit every 50 ms for 30 simulated hours
	for us := int64(0); us < 30*hour; us += 50_000 {
		m.add(us, 1)
	}
	if slots := (len(m.m.head) + len(m.m.tail)) / m.m.width; slots > headSlots+2*tailSlots {
		t.Errorf("meter holds %d slots after 30 h, want at most %d", slots, headSlots+2*tailSlots)
	}
	tests := []struct {
		name     string
		from, to int64
		want     float64
	}{
		{"whole run", 0, 30 * hour, 30 * 72000},
		{"warm-up edge in the head, end in the tail", hour / 2, 30*hour - 10_000_000, float64(30*hour-10_000_000-hour/2) / 50_000},
		{"a slot prorated at each edge", 25_000, 30*hour - 25_000, 30*72000 - 1},
	}
	for _, tt := range tests {
		if got := m.over(tt.from, tt.to); math.Abs(got-tt.want) > 1e-6*tt.want {
			t.Errorf("%s: over = %.1f, want %.1f", tt.name, got, tt.want)
		}
	}
}
