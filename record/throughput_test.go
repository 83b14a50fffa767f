package record

import (
	"math"
	"testing"
)

func TestRateCountsCompletionsInSpan(t *testing.T) {
	t.Parallel()
	a := NewAggregate()
	// Two successes completing at 1.05 s and 1.95 s (100 tokens each,
	// arriving as one event at their end), one at 3.05 s, and a failure at
	// 1.5 s that must not count. E2E is 50 ms each, so tokens are looked
	// at 50 ms (the E2E P90) behind now.
	for _, done := range []int64{1_050_000, 1_950_000, 3_050_000} {
		a.Add(&Result{SendUS: done - 50_000, E2EUS: 50_000, EventsUS: []int64{50_000}, OutputTokens: 100, TokenSource: TokensUsage})
	}
	a.Add(&Result{SendUS: 1_400_000, E2EUS: 100_000, Error: ErrHTTP5xx})
	tests := []struct {
		now, span        int64
		wantReq, wantTok float64
	}{
		// Both completions of [1, 2]; tokens over [0.95, 1.95]: the 1.95 s ones
		// are prorated within their 100 ms slot, half in.
		{2_000_000, 1_000_000, 2, 150},
		{4_000_000, 4_000_000, 0.75, 300.0 / 3.95}, // all three over 4 s; tokens over the 3.95 s before the lag
		// A second without completions; tokens over [1.95, 2.95] hold the other half.
		{3_000_000, 1_000_000, 0, 50},
		{3_000_000, 0, 0, 0}, // an empty span
	}
	for _, tt := range tests {
		req, tok := a.Rate(tt.now, tt.span)
		if math.Abs(req-tt.wantReq) > 1e-9 || math.Abs(tok-tt.wantTok) > 1e-6 {
			t.Errorf("Rate(%d, %d) = %.3f req/s %.1f tok/s, want %.3f %.1f", tt.now, tt.span, req, tok, tt.wantReq, tt.wantTok)
		}
	}
}

// TestRateIsSteadyWhenLongRepliesFinishInBursts: a server streaming a
// steady 1000 tok/s to 10 users whose 10 s replies all finish together
// every 10 s. Counting tokens at completion swings between 0 and 10x the
// pace; counted at arrival, behind the E2E lag, the line holds the pace.
func TestRateIsSteadyWhenLongRepliesFinishInBursts(t *testing.T) {
	t.Parallel()
	a := NewAggregate()
	const e2e = 10_000_000
	for wave := range int64(6) {
		for range 10 {
			ev := make([]int64, 1000) // 1000 tokens over 10 s: 100 tok/s per stream
			for k := range ev {
				ev[k] = int64(k+1) * 10_000
			}
			a.Add(&Result{SendUS: wave * e2e, E2EUS: e2e, TTFTUS: 10_000, Stream: true, EventsUS: ev, OutputTokens: 1000, TokenSource: TokensUsage})
		}
	}
	for now := int64(25_000_000); now <= 60_000_000; now += 1_000_000 {
		if _, tok := a.Rate(now, 5_000_000); math.Abs(tok-1000) > 1 {
			t.Errorf("Rate at %.0f s = %.1f tok/s, want the steady 1000", float64(now)/1e6, tok)
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
