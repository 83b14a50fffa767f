package experiment

import (
	"context"
	"fmt"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// The transcriptions API end to end against the simulator: 10 s of audio
// a request is, by the simulated model's construction, a 500-frame
// prefill and a 30-token transcript, streamed as 30 delta events (TTFT
// the first) or answered whole; the counts come back through the
// server's usage. The simulator's faults are classified as on the other
// streamed APIs.
func TestTranscriptionsAgainstSim(t *testing.T) {
	t.Parallel()
	tests := []struct {
		faults string
		stream bool
		want   record.ErrorKind
	}{
		{"", true, record.ErrNone},
		{"", false, record.ErrNone},
		{"malformed=1", true, record.ErrMalformedEvent},
		{"missing_done=1", true, record.ErrStreamIncomplete},
		{"error_event=1", true, record.ErrStreamErrorEvent},
		{"status503=1", false, record.ErrHTTP5xx},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/stream=%v", tc.faults, tc.stream), func(t *testing.T) {
			t.Parallel()
			faults, err := sim.ParseFaults(tc.faults)
			if err != nil {
				t.Fatal(err)
			}
			p := testPlan(t, fmt.Sprintf(`
target: {url: %s, api: transcriptions, model: tiny-sim, stream: %v, preflight: false}
load: {concurrency: 2, requests: 6}
workload: {audio: {seconds: "10"}}
`, tinySim(t, faults), tc.stream))
			res, err := Run(context.Background(), p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Summary
			if tc.want != record.ErrNone {
				if s.Requests.Failed != 6 || s.Errors[string(tc.want)] != 6 {
					t.Errorf("requests %+v errors %v: want all 6 classified %s", s.Requests, s.Errors, tc.want)
				}
				return
			}
			if s.Requests.Succeeded != 6 {
				t.Fatalf("requests %+v errors %v: want 6 ok", s.Requests, s.Errors)
			}
			if s.Tokens.InputTotal != 6*500 || s.Tokens.OutputTotal != 6*30 || s.Tokens.UsageReported != 6 {
				t.Errorf("tokens %+v: want 3000 in, 180 out, from usage", s.Tokens)
			}
			if ttft := s.Metrics.TTFT; tc.stream && (ttft.Count != 6 || ttft.P50 <= 0 || ttft.P50 >= s.Metrics.E2E.P50) {
				t.Errorf("TTFT %+v, E2E p50 %v: want 6 first deltas before the ends", ttft, s.Metrics.E2E.P50)
			}
			if c := s.Checks; c.IgnoreEOSChecked != 0 {
				t.Errorf("checks %+v: no max_tokens is sent, so none is checked", c)
			}
			expectRebuildIdentical(t, res.Dir)
		})
	}
}
