package protocol_test

import (
	"testing"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// The Messages API client against the simulator with a reasoning
// profile: 5 thinking tokens, every reply run to max_tokens (16), so the
// events, counts and finish are known by construction, streamed or whole;
// a body without max_tokens is the server's 400, in Anthropic's shape.
func TestMessagesAgainstSim(t *testing.T) {
	t.Parallel()
	prof := tinyFixed(t)
	prof.ReasoningLength = sim.LengthDist{Kind: "fixed", Mean: 5}
	srv, v1 := startProfile(t, prof, sim.Faults{})
	c := simClient(t, protocol.OpenAIOptions{BaseURL: v1, APIKey: "sk-test"})
	send := func(stream bool, maxTokens int) protocol.Trace {
		body := protocol.OpenAIBody{Model: srv.Profile().Model, MaxTokens: maxTokens, Stream: stream,
			Messages: []protocol.ChatMessage{{Role: "system", Content: "be brief"}, {Role: "user", Content: "tell me about the sea"}}}
		b, err := body.Render(protocol.APIMessages)
		if err != nil {
			t.Fatal(err)
		}
		return do(t, c, &protocol.Request{API: protocol.APIMessages, Body: b, Stream: stream, MaxTokens: 16, EventsCap: 16})
	}
	for _, stream := range []bool{true, false} {
		tr := send(stream, 16)
		events, reasoning := 16, 5
		if !stream {
			events, reasoning = 1, 0 // one body: an answer event
		}
		if tr.Err != record.ErrNone || tr.ContentEvents != events || tr.ReasoningEvents != reasoning ||
			tr.CompletionTokens != 16 || tr.FinishReason != "length" || tr.PromptTokens == 0 {
			t.Errorf("stream %v: %s %q, %d events (%d reasoning), usage %d/%d, finish %q", stream, tr.Err, tr.ErrMsg,
				tr.ContentEvents, tr.ReasoningEvents, tr.PromptTokens, tr.CompletionTokens, tr.FinishReason)
		}
		if stream && (tr.FirstReasoning != 1 || tr.FirstAnswer != 6) {
			t.Errorf("first reasoning event %d, first answer %d; want 1 and 6", tr.FirstReasoning, tr.FirstAnswer)
		}
	}
	if tr := send(true, 0); tr.Err != record.ErrHTTP4xx {
		t.Errorf("no max_tokens: %s %q, want http_4xx", tr.Err, tr.ErrMsg)
	}
}

// The simulator's faults reach the clients of both new APIs classified as
// on every other API: an in-stream error event, a malformed event, a
// stream without its end event, a 503.
func TestResponsesAndMessagesFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		faults sim.Faults
		want   record.ErrorKind
	}{
		{"error_event", sim.Faults{ErrorEvent: 1}, record.ErrStreamErrorEvent},
		{"malformed", sim.Faults{Malformed: 1}, record.ErrMalformedEvent},
		{"missing_done", sim.Faults{MissingDone: 1}, record.ErrStreamIncomplete},
		{"503", sim.Faults{Status: map[int]float64{503: 1}}, record.ErrHTTP5xx},
	}
	for _, tt := range tests {
		srv, v1 := startProfile(t, tinyFixed(t), tt.faults)
		c := simClient(t, protocol.OpenAIOptions{BaseURL: v1})
		for _, api := range []protocol.API{protocol.APIResponses, protocol.APIMessages} {
			b, err := protocol.OpenAIBody{Model: srv.Profile().Model, Prompt: "hi", MaxTokens: 16, Stream: true}.Render(api)
			if err != nil {
				t.Fatal(err)
			}
			tr := do(t, c, &protocol.Request{API: api, Body: b, Stream: true, MaxTokens: 16, EventsCap: 16})
			if tr.Err != tt.want {
				t.Errorf("%s, fault %s: %s %q, want %s", api, tt.name, tr.Err, tr.ErrMsg, tt.want)
			}
		}
	}
}
