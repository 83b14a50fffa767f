package experiment

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

const secretKey = "sk-test-DO-NOT-LEAK-0123456789"

// writeTokenChunks writes n OpenAI content chunks ("t0 ", "t1 ", …) to
// an SSE reply, each gap after the one before and flushed, as a server
// streams tokens; it returns false once the client has gone.
func writeTokenChunks(w http.ResponseWriter, r *http.Request, n int, gap time.Duration) bool {
	for i := range n {
		select {
		case <-time.After(gap):
		case <-r.Context().Done():
			return false
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
		w.(http.Flusher).Flush()
	}
	return true
}

// streamServer streams `tokens` content chunks, `gap` apart, with usage and
// [DONE], like vLLM. It insists on the bearer key so a run proves it sent it.
func streamServer(t *testing.T, tokens int, gap time.Duration) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+secretKey {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n")
		w.(http.Flusher).Flush()
		if !writeTokenChunks(w, r, tokens, gap) {
			return
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":16,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", tokens, tokens+16)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func testPlan(t testing.TB, yaml string) *plan.Plan {
	t.Helper()
	p, err := plan.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	p.Output.Dir = t.TempDir()
	return p
}

// runPlan runs the plan yaml in the test environment and fails the test
// when the run fails.
func runPlan(t *testing.T, yaml string) *Outcome {
	t.Helper()
	res, err := Run(context.Background(), testPlan(t, yaml), Options{Env: testEnv()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func testEnv() Env {
	return Env{Getenv: func(k string) string {
		if k == "TEST_KEY" {
			return secretKey
		}
		return ""
	}}
}

func TestRunWritesRunDirectoryAndRebuildMatches(t *testing.T) {
	t.Parallel()
	srv := streamServer(t, 8, time.Millisecond)
	p := testPlan(t, fmt.Sprintf(`
name: e2e
target:
  url: %s/v1
  model: m
  api_key_env: TEST_KEY
  headers: {X-Api-Key: %s}
load:
  concurrency: 4
  requests: 40
workload:
  input_tokens: "16"
  output_tokens: "8"
`, srv.URL, secretKey))
	var progress bytes.Buffer
	res, err := Run(context.Background(), p, Options{Env: testEnv(), Progress: &progress, ProgressEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Requests.Succeeded != 40 || s.Requests.Failed != 0 {
		t.Fatalf("requests %+v, errors %v: want 40 successes", s.Requests, s.Errors)
	}
	if s.Tokens.Source != "usage" || s.Tokens.OutputTotal != 40*8 {
		t.Errorf("tokens %+v: want 320 output tokens from usage", s.Tokens)
	}
	// 8 tokens 1ms apart: TTFT >= 1ms, E2E >= 8ms, ITL around 1ms.
	if m := s.Metrics.TTFT; m.P50 < 1 || s.Metrics.E2E.P50 < 8 || s.Metrics.ITL.P50 < 0.5 {
		t.Errorf("ttft p50 %.2fms e2e p50 %.2fms itl p50 %.2fms: implausible for the server's pacing", m.P50, s.Metrics.E2E.P50, s.Metrics.ITL.P50)
	}
	for _, f := range []string{rundir.Plan, rundir.Env, rundir.Records, rundir.Series, rundir.Events, rundir.Summary} {
		b, err := os.ReadFile(filepath.Join(res.Dir, f))
		if err != nil {
			t.Fatalf("run directory lacks %s: %v", f, err)
		}
		if bytes.Contains(b, []byte(secretKey)) {
			t.Errorf("%s contains the API key", f)
		}
	}
	if !strings.Contains(progress.String(), "req/s") && progress.Len() == 0 {
		t.Errorf("no progress printed")
	}

	expectRebuildIdentical(t, res.Dir)
}

func TestRunKeepsFailuresAsData(t *testing.T) {
	t.Parallel()
	// A target that refuses every request with 503: the run succeeds as a
	// run, and every request is a classified failure (the pre-flight
	// probe, which would stop it, is off).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s/v1, preflight: false}
load: {rate: 200, arrival: constant, requests: 20}
`, srv.URL))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Requests.Failed != 20 || s.Errors[string(record.ErrHTTP5xx)] != 20 {
		t.Fatalf("requests %+v errors %v: want 20 http_5xx failures", s.Requests, s.Errors)
	}
	if s.Metrics.TTFT.Count != 0 {
		t.Errorf("failed requests leaked into TTFT: %+v", s.Metrics.TTFT)
	}
	var kinds []record.EventKind
	if _, err := rundir.ReadEvents(filepath.Join(res.Dir, rundir.Events), func(e *record.Event) error {
		// How many seconds hold a burst of failures depends on timing;
		// observe_test.go covers the automatic annotations.
		if e.Kind != observe.EventErrorBurst {
			kinds = append(kinds, e.Kind)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []record.EventKind{record.EventRunStart, record.EventFirstError, record.EventMeasureEnd, record.EventRunEnd}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", kinds, want)
	}
}

func TestRunRefusesBadSetupBeforeWritingAnything(t *testing.T) {
	t.Parallel()
	p := testPlan(t, `
target: {url: "http://127.0.0.1:1/v1", api_key_env: MISSING_KEY}
load: {concurrency: 1, requests: 1}
`)
	_, err := Run(context.Background(), p, Options{Env: testEnv()})
	if err == nil || !strings.Contains(err.Error(), "MISSING_KEY") {
		t.Fatalf("err %v: want an error naming the missing key variable", err)
	}
	entries, _ := os.ReadDir(p.Output.Dir)
	if len(entries) != 0 {
		t.Errorf("a run directory was created for a run that never started")
	}
}
