package experiment

import (
	"context"
	"fmt"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// The rerank, score and pooling APIs end to end against the simulator:
// every request succeeds with no output tokens, and the server's usage —
// the tokens its cross-encoder read — is known by construction: 4
// documents of 32 tokens behind a 16-token query are 4 × (16 + 32) = 192
// tokens a request for rerank and score (the query read once per
// document), the 16-token input alone for pooling; the client's own count
// follows the same rule, so the two agree. Faults are classified
// as on every API that answers in one body.
func TestPoolingAPIsAgainstSim(t *testing.T) {
	t.Parallel()
	tests := []struct {
		api, url string // url: "v1" or "root"
		faults   string
		want     record.ErrorKind
		perReq   int64 // input tokens a request, from the server's usage
	}{
		{"rerank", "v1", "", record.ErrNone, 4 * (16 + 32)},
		{"score", "v1", "", record.ErrNone, 4 * (16 + 32)},
		{"pooling", "root", "", record.ErrNone, 16},
		{"rerank", "v1", "status503=1", record.ErrHTTP5xx, 0},
		{"rerank", "v1", "malformed=1", record.ErrMalformedEvent, 0},
		{"score", "v1", "reset=1", record.ErrConnReset, 0},
		{"pooling", "root", "status400=1", record.ErrHTTP4xx, 0},
	}
	for _, tc := range tests {
		t.Run(tc.api+"/"+tc.faults, func(t *testing.T) {
			t.Parallel()
			faults, err := sim.ParseFaults(tc.faults)
			if err != nil {
				t.Fatal(err)
			}
			url := tinySim(t, faults)
			docs := "documents: {count: 4, tokens: \"32\"}"
			if tc.url == "root" {
				url, docs = rootURL(url), ""
			}
			p := testPlan(t, fmt.Sprintf(`
target: {url: %s, api: %s, model: tiny-sim, preflight: false}
load: {concurrency: 2, requests: 8}
workload: {input_tokens: "16", salt: "off", %s}
`, url, tc.api, docs))
			res, err := Run(context.Background(), p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Summary
			if tc.want != record.ErrNone {
				if s.Requests.Failed != 8 || s.Errors[string(tc.want)] != 8 {
					t.Errorf("requests %+v errors %v: want all 8 classified %s", s.Requests, s.Errors, tc.want)
				}
				return
			}
			if s.Requests.Succeeded != 8 {
				t.Fatalf("requests %+v errors %v: want 8 ok", s.Requests, s.Errors)
			}
			if s.Tokens.OutputTotal != 0 || s.Tokens.InputTotal != 8*tc.perReq {
				t.Errorf("tokens %+v: want no output, %d input (%d a request)", s.Tokens, 8*tc.perReq, tc.perReq)
			}
			// The client counts what the model reads as the server does.
			if c := s.Checks; c.InputTokensCompared != 8 || c.InputTokensDiff != 0 {
				t.Errorf("checks %+v: want 8 prompts compared, no difference from the server's usage", c)
			}
			expectRebuildIdentical(t, res.Dir)
		})
	}
}
