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
	"sync/atomic"
	"testing"

	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/workload"
)

// chainPlan mixes plain chats with a RAG chain: embeddings on the target,
// a vector search on a retrieval server (%s twice), then chat.
// chainPlan stamps with the user-space clock: its checks are about the
// chain's mechanics, and "the steps are nearly all of the chain" holds
// only when each step counts the client's read of its last bytes (on the
// kernel clock that read lag falls between the steps, a fifth to a third
// of the chain under -race on a busy host; docs/metrics.md).
const chainPlan = `
target: {url: %s, kernel_timestamps: false}
load: {concurrency: 3, requests: %d, grace: 10s}
workload:
  seed: 3
  classes:
    - {name: chat, weight: 1, input_tokens: 32, output_tokens: 8}
    - name: rag
      weight: 1
      input_tokens: 16
      output_tokens: 8
      chain:
        - {api: embeddings, body: {dimensions: 8}}
        - http:
            url: %s/%s
            headers: {X-Api-Key: vdb-secret-1}
            body: '{"query": "{{prompt}}", "top_k": 2}'
            extract: results.*.text
            timeout: 5s
        - {api: chat, name: answer}
`

// ragRetrieval answers POST /search with two passages when the API key
// is right, and fails every other path with a 503.
func ragRetrieval(t *testing.T, calls *atomic.Int64) *httptest.Server {
	t.Helper()
	passage := strings.Repeat("retrieved passage text ", 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/search" || r.Header.Get("X-Api-Key") != "vdb-secret-1" {
			http.Error(w, "index unavailable", http.StatusServiceUnavailable)
			return
		}
		_, _ = fmt.Fprintf(w, `{"results":[{"text":%q},{"text":%q}]}`, passage, passage)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// runChainPlan runs chainPlan against the tiny simulator profile.
func runChainPlan(t *testing.T, path string, calls *atomic.Int64) *Outcome {
	t.Helper()
	url := tinySim(t, sim.Faults{})
	retr := ragRetrieval(t, calls)
	res, err := Run(context.Background(), testPlan(t, fmt.Sprintf(chainPlan, url, 40, retr.URL, path)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// End to end: chain requests run embeddings → retrieve → answer, the
// summary has their per-step and end-to-end figures, plain classes are
// untouched, the rebuilt summary is identical and plan.yaml hides the
// retrieval key.
func TestChainAgainstSimulator(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	res := runChainPlan(t, "search", &calls)
	s := res.Summary
	rag, chat := s.Chains["rag"], s.Classes["chat"]
	if rag == nil || len(s.Chains) != 1 || chat == nil || s.Requests.Failed != 0 {
		t.Fatalf("chains %v classes %v errors %v", s.Chains, s.Classes, s.Errors)
	}
	if rag.Chains != s.Classes["rag"].Requests.Succeeded || rag.Failed != 0 || rag.Chains < 10 || calls.Load() != rag.Chains {
		t.Errorf("rag %d chains, %d failed; class %+v; %d retrieval calls", rag.Chains, rag.Failed, s.Classes["rag"].Requests, calls.Load())
	}
	names := []string{}
	share := 0.0
	for _, st := range rag.Steps {
		names = append(names, st.Name+"/"+st.Kind)
		share += st.ShareOfE2E
		if st.Started != rag.Chains || st.Latency.Count != rag.Chains {
			t.Errorf("step %s: started %d, latency count %d", st.Name, st.Started, st.Latency.Count)
		}
	}
	if got := strings.Join(names, " "); got != "embeddings/embeddings retrieve/http answer/chat" {
		t.Errorf("steps %s", got)
	}
	// The steps run back to back: together they are nearly all of the chain.
	if share < 0.8 || share > 1.0001 || rag.E2E.P50 < rag.Steps[2].Latency.P50 {
		t.Errorf("share of e2e %v, e2e %+v, answer %+v", share, rag.E2E, rag.Steps[2].Latency)
	}
	if rag.Steps[2].TTFT.Count != rag.Chains || rag.Steps[0].TTFT.Count != 0 {
		t.Errorf("ttft counts %d %d", rag.Steps[2].TTFT.Count, rag.Steps[0].TTFT.Count)
	}
	expectRebuildIdentical(t, res.Dir)
	raw, err := os.ReadFile(filepath.Join(res.Dir, rundir.Plan))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("vdb-secret-1")) || !bytes.Contains(raw, []byte("extract: results.*.text")) {
		t.Errorf("plan.yaml:\n%s", raw)
	}
}

// A retrieval that fails fails its chains at step 2 (http_5xx), counted
// per step; the answer step never runs and plain chats still succeed.
func TestChainFailingRetrieval(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	res := runChainPlan(t, "down", &calls)
	s := res.Summary
	rag := s.Chains["rag"]
	if rag == nil || rag.Failed != rag.Chains || rag.Chains < 10 || len(rag.Steps) != 2 {
		t.Fatalf("rag %+v", rag)
	}
	if st := rag.Steps[1]; st.Failed != rag.Chains || st.Errors["http_5xx"] != rag.Chains || rag.Steps[0].Failed != 0 {
		t.Errorf("steps %+v", rag.Steps)
	}
	if s.Classes["chat"].Requests.Failed != 0 || s.Errors["http_5xx"] != rag.Chains {
		t.Errorf("chat %+v errors %v", s.Classes["chat"].Requests, s.Errors)
	}
	expectRebuildIdentical(t, res.Dir)
}

// TestChainStepRendering: a step's body has its own API and model and the
// target's, class's and step's fields in that order of precedence.
func TestChainStepRendering(t *testing.T) {
	t.Parallel()
	p := testPlan(t, `
target: {url: http://127.0.0.1:1/v1, model: m-chat, body: {a: 1, b: 1, c: 1}}
load: {concurrency: 1, requests: 1}
workload:
  classes:
    - name: rag
      weight: 1
      body: {b: 2, c: 2}
      chain:
        - {api: embeddings, model: m-embed, url: "http://127.0.0.1:2/v1", body: {c: 3}}
        - {api: chat}
`)
	chains, err := newGraphs(p, mustClient(t, p))
	if err != nil {
		t.Fatal(err)
	}
	steps := chains["rag"].Nodes
	req, err := steps[0].Render(testSpec())
	if err != nil {
		t.Fatal(err)
	}
	if got := string(req.Body); got != `{"a":1,"b":2,"c":3,"input":"q","model":"m-embed"}` || req.Stream {
		t.Errorf("embeddings body %s stream %v", got, req.Stream)
	}
	if steps[0].Client == nil || steps[1].Client != nil || steps[1].Name != "chat" {
		t.Errorf("clients %v %v name %s", steps[0].Client, steps[1].Client, steps[1].Name)
	}
	req, err = steps[1].Render(testSpec())
	if err != nil || !bytes.Contains(req.Body, []byte(`"model":"m-chat"`)) || !req.Stream || req.API != protocol.APIChat {
		t.Errorf("chat body %s stream %v err %v", req.Body, req.Stream, err)
	}
}

func mustClient(t *testing.T, p *plan.Plan) protocol.Client {
	t.Helper()
	c, err := newClient(p, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func testSpec() workload.Spec {
	return workload.Spec{Class: "rag", Prompt: "q", InputTokens: 1, MaxTokens: 8}
}

// TestChainWithSimulatedSearch: the cookbook's RAG chain against one
// simulator, its Qdrant-style search included: every chain succeeds, the
// search step is its own row, and the passages it retrieved reach the
// answer's prompt (the server counts far more input than the question).
func TestChainWithSimulatedSearch(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	root := strings.TrimSuffix(url, "/v1")
	res, err := Run(context.Background(), testPlan(t, fmt.Sprintf(`
target: {url: %s}
load: {concurrency: 2, requests: 8, grace: 10s}
workload:
  classes:
    - name: rag
      weight: 1
      input_tokens: 16
      output_tokens: 8
      chain:
        - {api: embeddings}
        - name: search
          http:
            method: POST
            url: %s/collections/docs/points/search
            body: '{"query": "{{prompt}}", "limit": 2}'
            extract: result.*.payload.text
        - {api: chat, name: answer}
`, url, root)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	rag := s.Chains["rag"]
	if rag == nil || rag.Chains != 8 || rag.Failed != 0 || len(rag.Steps) != 3 || rag.Steps[1].Name != "search" {
		t.Fatalf("chains %+v, errors %v", rag, s.Errors)
	}
	// The embeddings step opens the model pool's connections and the
	// answer step reuses them: 16 model calls open about one connection
	// per user (2), one more when a busy host makes a request start
	// while its user's connection is still being returned (seen once
	// under a load average of 11); without reuse it would be 16.
	if c := s.Connections; c == nil || c.Opened < 1 || c.Opened > 3 {
		t.Errorf("connections %+v, want 1 to 3 opened (2 users, 16 model calls)", c)
	}
	// Two 96-word passages beside a 16-token question: over 190 input
	// tokens a request.
	if in := s.Tokens.InputTotal / s.Requests.Succeeded; in < 190 {
		t.Errorf("%d input tokens a request: the passages did not reach the prompt", in)
	}
}
