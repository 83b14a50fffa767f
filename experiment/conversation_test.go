package experiment

import (
	"context"
	"fmt"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// conversationPlan mixes 3-turn chats with embeddings calls. The history
// is synthetic so each turn's length is known by construction (the
// simulator's replies re-tokenize to a few tokens more or less).
const conversationPlan = `
target: {url: %s}
load: {concurrency: 3, requests: 60, grace: 10s}
workload:
  seed: 5
  classes:
    - {name: chat, weight: 1, input_tokens: 20, output_tokens: 10, turns: 3, history: synthetic}
    - {name: embed, weight: 1, input_tokens: 40, api: embeddings}
`

// End to end against the simulator: conversations carry their growing
// history (the server counts it in usage), embeddings calls succeed with
// the server's prompt count and no output tokens.
func TestConversationsAndEmbeddingsAgainstSimulator(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	res, err := Run(context.Background(), testPlan(t, fmt.Sprintf(conversationPlan, url)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	chat, embed := s.Classes["chat"], s.Classes["embed"]
	if chat == nil || embed == nil || s.Requests.Failed != 0 || chat.Requests.Succeeded < 15 || embed.Requests.Succeeded < 10 {
		t.Fatalf("classes %v errors %v", s.Classes, s.Errors)
	}
	inputs := map[string]map[int]bool{"chat": {}, "embed": {}}
	eachRecord(t, res.Dir, func(r *record.Result) error {
		inputs[r.Class][r.InputTokens] = true
		if r.Class == "embed" && (r.TokenSource != record.TokensUsage || r.OutputTokens != 0 || r.TTFTUS != r.E2EUS) {
			t.Errorf("embeddings record %+v", r)
		}
		return nil
	})
	// Turn k's prompt holds k earlier exchanges of 20+10 tokens: the
	// server counts 20, 50 and 80 tokens (plus its chat template's).
	if len(inputs["chat"]) != 3 || len(inputs["embed"]) != 1 || !inputs["embed"][40] {
		t.Errorf("input token counts seen: %v", inputs)
	}
}
