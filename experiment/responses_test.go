package experiment

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// responsesPlan runs 3-turn conversations over the Responses API.
const responsesPlan = `
target: {url: %s, api: responses}
load: {concurrency: 2, requests: 24, grace: 10s}
workload:
  seed: 5
  classes:
    - {name: chat, weight: 1, input_tokens: 20, output_tokens: 10, turns: 3}
`

// End to end against the simulator: each later turn names the previous
// reply's id (previous_response_id), so the body carries the new turn
// only — every body is about the first turn's size — while the server,
// holding the history, counts it as input: 20, 50 and 80 tokens by turn
// (20 in, 10 out a turn; within 5, as the held reply is the server's own
// text, not the workload's synthetic one). A body that resent the history would be about three times the
// first turn's by the third; an unknown id would fail with a 400.
func TestResponsesConversationsAgainstSimulator(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	res, err := Run(context.Background(), testPlan(t, fmt.Sprintf(responsesPlan, url)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Summary; s.Requests.Failed != 0 || s.Requests.Succeeded != 24 {
		t.Fatalf("requests %+v errors %v", s.Requests, s.Errors)
	}
	inputs := map[int]bool{}
	minOut, maxOut := int64(1<<62), int64(0)
	eachRecord(t, res.Dir, func(r *record.Result) error {
		inputs[r.InputTokens] = true
		minOut, maxOut = min(minOut, r.BytesOut), max(maxOut, r.BytesOut)
		if !strings.HasPrefix(r.ResponseID, "resp_") {
			t.Errorf("record %d: response_id %q", r.ID, r.ResponseID)
		}
		return nil
	})
	turns := map[int]bool{}
	for n := range inputs {
		for _, want := range []int{20, 50, 80} {
			if n >= want && n <= want+5 {
				turns[want] = true
			}
		}
	}
	if len(turns) != 3 || float64(maxOut) > 1.5*float64(minOut) {
		t.Errorf("input token counts %v, request bodies %d to %d bytes", inputs, minOut, maxOut)
	}
}
