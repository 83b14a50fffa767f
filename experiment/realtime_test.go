package experiment

import (
	"context"
	"testing"

	"github.com/inferload/inferload/sim"
)

// A realtime run end to end against the simulator: every session
// succeeds, streams (TTFT is the first text delta, before the end), its
// output comes from response.done's usage within max_output_tokens, and
// its records claim no ignore_eos (the API has none), so the ignore_eos
// check does not judge the model's own lengths.
func TestRealtimeAgainstSim(t *testing.T) {
	t.Parallel()
	p := testPlan(t, `
target: {url: `+tinySim(t, sim.Faults{})+`, api: realtime, model: tiny-sim}
load: {concurrency: 3, requests: 9}
workload: {input_tokens: "32", output_tokens: "12"}
`)
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Requests.Succeeded != 9 {
		t.Fatalf("requests %+v errors %v: want 9 ok", s.Requests, s.Errors)
	}
	if s.Tokens.UsageReported != 9 || s.Tokens.OutputTotal == 0 || s.Tokens.OutputTotal > 9*12 || s.Tokens.InputTotal == 0 {
		t.Errorf("tokens %+v: want usage from all 9, 1 to 108 output tokens", s.Tokens)
	}
	if m := s.Metrics; m.TTFT.Count != 9 || m.TTFT.P50 <= 0 || m.TTFT.P50 > m.E2E.P50 {
		t.Errorf("TTFT %+v, E2E %+v: want 9 first deltas before the ends", m.TTFT, m.E2E)
	}
	if s.Checks.IgnoreEOSChecked != 0 {
		t.Errorf("checks %+v: realtime sends no ignore_eos, so none is checked", s.Checks)
	}
	expectRebuildIdentical(t, res.Dir)
}
