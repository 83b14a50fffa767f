package record

import "testing"

func TestPlausibleUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		usage, events, maxTokens int
		want                     bool
	}{
		{120, 100, 128, true},           // a few events carried two tokens
		{2147483647, 2, 0, false},       // issue 12: INT_MAX beside 2 events, 5.7e12 tok/s
		{0, 40, 64, false},              // 0 (or "10", 1e20, which read as 0) beside a streamed answer
		{0, 0, 64, true},                // a non-streamed empty answer may be 0
		{64 * 5, 5, 0, true},            // 64 tokens a chunk is the most believed
		{64*5 + 1, 5, 0, false},         // one more is not
		{2*100 + 64 + 1, 0, 100, false}, // non-streamed, beyond what a stream may run to past max_tokens
		{150, 0, 100, true},             // past max_tokens but within the overrun allowance: the max_tokens check says so
		{-1, 3, 0, false},               // negative
	}
	for _, tt := range tests {
		if got := PlausibleUsage(tt.usage, tt.events, tt.maxTokens); got != tt.want {
			t.Errorf("PlausibleUsage(%d, %d events, max %d) = %v, want %v", tt.usage, tt.events, tt.maxTokens, got, tt.want)
		}
	}
}

func TestPlausiblePrompt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		usage, sent int
		want        bool
	}{
		{11, 9, true},               // a chat template's few tokens
		{2147483647, 9, false},      // issue 33: INT_MAX summed made input tokens/s 5.7e12
		{8*100 + 65536, 100, true},  // the most believed beside 100 sent
		{8*100 + 65537, 100, false}, // one more is not
		{9_000_000, 0, true},        // the prompt's length unknown: any real context
		{10_000_001, 0, false},      // beyond every context
		{10_000_001, 5e6, false},    // beyond every context, whatever was sent
		{-5, 9, false},              // negative
	}
	for _, tt := range tests {
		if got := PlausiblePrompt(tt.usage, tt.sent); got != tt.want {
			t.Errorf("PlausiblePrompt(%d, sent %d) = %v, want %v", tt.usage, tt.sent, got, tt.want)
		}
	}
}

// TestClientFailuresAreNotTheTargets: a request the load generator failed
// itself (client_resource) is counted apart, in errors under its kind,
// never in the target's failures or failure rate.
func TestClientFailuresAreNotTheTargets(t *testing.T) {
	t.Parallel()
	a := NewAggregate()
	a.Add(&Result{ID: 1, E2EUS: 1000, Stream: true, TTFTUS: 100, EventsUS: []int64{100}, OutputTokens: 1})
	a.Add(&Result{ID: 2, E2EUS: 10, Error: ErrClientResource, ErrorMsg: "too many open files"})
	a.Add(&Result{ID: 3, E2EUS: 10, Error: ErrHTTP5xx})
	s := a.Summary(RunInfo{EndUS: 2000})
	r := s.Requests
	if r.ClientFailed != 1 || r.Failed != 1 || r.Total != 3 || s.FailureRate != 0.5 || s.Errors[string(ErrClientResource)] != 1 {
		t.Errorf("requests %+v, failure rate %v, errors %v: want 1 client failure apart, 1 target failure of 2", r, s.FailureRate, s.Errors)
	}
}
