package protocol_test

import (
	"strings"
	"testing"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// The Responses API client against the simulator with a reasoning
// profile: 5 reasoning tokens, every reply run to max_output_tokens (16),
// so the events, counts and finish are known by construction, streamed or
// whole; a second turn naming the first's id is answered with the held
// history counted as input, and an unknown id is the server's 400.
func TestResponsesAgainstSim(t *testing.T) {
	t.Parallel()
	prof := tinyFixed(t)
	prof.ReasoningLength = sim.LengthDist{Kind: "fixed", Mean: 5}
	srv, v1 := startProfile(t, prof, sim.Faults{})
	c := simClient(t, protocol.OpenAIOptions{BaseURL: v1})
	send := func(stream bool, prev string, msgs ...protocol.ChatMessage) protocol.Trace {
		body := protocol.OpenAIBody{Model: srv.Profile().Model, Messages: msgs, MaxTokens: 16, Stream: stream, PreviousResponseID: prev}
		b, err := body.Render(protocol.APIResponses)
		if err != nil {
			t.Fatal(err)
		}
		return do(t, c, &protocol.Request{API: protocol.APIResponses, Body: b, Stream: stream, MaxTokens: 16, EventsCap: 16})
	}
	first := []protocol.ChatMessage{{Role: "user", Content: "tell me a story about the sea"}}
	for _, stream := range []bool{true, false} {
		tr := send(stream, "", first...)
		events, reasoning := 16, 5
		if !stream {
			events, reasoning = 1, 0 // one body: an answer event
		}
		if tr.Err != record.ErrNone || tr.ContentEvents != events || tr.ReasoningEvents != reasoning ||
			tr.CompletionTokens != 16 || tr.ReasoningTokens != 5 || tr.FinishReason != "length" ||
			!strings.HasPrefix(tr.ResponseID, "resp_") || tr.PromptTokens == 0 {
			t.Fatalf("stream %v: %s %q, %d events (%d reasoning), usage %d/%d (%d reasoning), finish %q, id %q",
				stream, tr.Err, tr.ErrMsg, tr.ContentEvents, tr.ReasoningEvents, tr.PromptTokens, tr.CompletionTokens,
				tr.ReasoningTokens, tr.FinishReason, tr.ResponseID)
		}
		// The second turn sends only its own message; the server counts
		// the held turn (prompt and 11-token answer) as input too.
		next := protocol.ChatMessage{Role: "user", Content: "go on"}
		alone := send(stream, "", next)
		cont := send(stream, tr.ResponseID, append(first, protocol.ChatMessage{Role: "assistant", Content: "x"}, next)...)
		if cont.Err != record.ErrNone || cont.PromptTokens < tr.PromptTokens+alone.PromptTokens+11 {
			t.Errorf("stream %v: continued turn %s %q, %d input tokens; want at least %d + %d + 11",
				stream, cont.Err, cont.ErrMsg, cont.PromptTokens, tr.PromptTokens, alone.PromptTokens)
		}
	}
	if tr := send(true, "resp_unknown", first...); tr.Err != record.ErrHTTP4xx || !strings.Contains(tr.ErrMsg, "not found") {
		t.Errorf("unknown previous_response_id: %s %q, want http_4xx not found", tr.Err, tr.ErrMsg)
	}
}
