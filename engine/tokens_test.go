package engine

import (
	"testing"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
)

// TestFillTokensRefusesImplausibleUsage: the server's usage is the count
// when it can be true of the reply; one it cannot have is kept beside the
// record and the counted events stand in.
func TestFillTokensRefusesImplausibleUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		usage, events int
		wantOut       int
		wantSource    record.TokenSource
		implausible   bool
	}{
		{12, 10, 12, record.TokensUsage, false},        // usage trusted
		{2147483647, 2, 2, record.TokensCounted, true}, // INT_MAX beside 2 events
		{0, 8, 8, record.TokensCounted, true},          // 0 beside a streamed answer
	}
	for _, tt := range tests {
		r := &record.Result{MaxTokens: 64, PromptTokensSent: 9}
		fillTokens(r, &protocol.Trace{UsageReported: true, CompletionTokens: tt.usage, ContentEvents: tt.events, PromptTokens: 11}, true)
		if r.OutputTokens != tt.wantOut || r.TokenSource != tt.wantSource || r.UsageImplausible != tt.implausible || r.InputTokens != 11 {
			t.Errorf("usage %d, %d events: output %d (%s), implausible %v, input %d; want %d (%s), %v, 11",
				tt.usage, tt.events, r.OutputTokens, r.TokenSource, r.UsageImplausible, r.InputTokens, tt.wantOut, tt.wantSource, tt.implausible)
		}
		if tt.implausible && r.UsageOutputTokens != tt.usage {
			t.Errorf("the server's %d was not kept: %d", tt.usage, r.UsageOutputTokens)
		}
	}
}

// TestFillTokensRefusesImplausiblePrompt: a prompt_tokens the request
// cannot have never becomes the input figure, generated reply or not;
// the server's is kept beside the record.
func TestFillTokensRefusesImplausiblePrompt(t *testing.T) {
	t.Parallel()
	for _, generates := range []bool{true, false} {
		r := &record.Result{MaxTokens: 64, PromptTokensSent: 9}
		fillTokens(r, &protocol.Trace{UsageReported: true, CompletionTokens: 4, ContentEvents: 4, PromptTokens: 2147483647}, generates)
		if r.InputTokens != 9 || !r.UsageImplausible || r.UsageInputTokens != 2147483647 || r.UsageOutputTokens != 0 {
			t.Errorf("generates %v: input %d, implausible %v, usage input %d, usage output %d; want 9, true, 2147483647, 0",
				generates, r.InputTokens, r.UsageImplausible, r.UsageInputTokens, r.UsageOutputTokens)
		}
	}
}

// TestFillTokensNonGenerating: a reply that is not generated text
// (embeddings, images, tensors) is never "counted": with usage the server's
// figures stand, without it the source is "none", so no
// counted-tokens warning can fire for it.
func TestFillTokensNonGenerating(t *testing.T) {
	t.Parallel()
	r := &record.Result{PromptTokensSent: 9}
	fillTokens(r, &protocol.Trace{ContentEvents: 1}, false)
	if r.TokenSource != record.TokensNone || r.OutputTokens != 0 || r.InputTokens != 9 {
		t.Errorf("no usage: source %q output %d input %d, want none, 0, 9", r.TokenSource, r.OutputTokens, r.InputTokens)
	}
	r = &record.Result{PromptTokensSent: 9}
	fillTokens(r, &protocol.Trace{ContentEvents: 1, UsageReported: true, PromptTokens: 12}, false)
	if r.TokenSource != record.TokensUsage || r.InputTokens != 12 {
		t.Errorf("usage: source %q input %d, want usage, 12", r.TokenSource, r.InputTokens)
	}
}
