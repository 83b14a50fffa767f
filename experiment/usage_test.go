package experiment

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestImplausiblePromptNeverSummed: a server whose usage says every
// prompt was 2147483647 tokens (and every reply 2147483647) makes no input
// or output figure of the summary: the client's own counts stand, each
// record keeps the server's figures, and the summary counts them.
func TestImplausiblePromptNeverSummed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2147483647,\"completion_tokens\":2147483647}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s/v1, preflight: false}
load: {concurrency: 2, requests: 10}
workload: {input_tokens: "16", output_tokens: "3"}
`, srv.URL))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Requests.Succeeded != 10 || s.Tokens.UsageImplausible != 10 {
		t.Fatalf("%d succeeded, %d implausible: want 10 and 10", s.Requests.Succeeded, s.Tokens.UsageImplausible)
	}
	if s.Tokens.InputTotal > 10*16*2 || s.Tokens.OutputTotal != 30 {
		t.Errorf("input %d, output %d tokens summed: want about 160 (the prompts sent) and 30 (counted)",
			s.Tokens.InputTotal, s.Tokens.OutputTotal)
	}
}
