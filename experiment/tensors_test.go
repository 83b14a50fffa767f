package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
)

// A triton-infer run against the simulator's classifier, and a
// triton-grpc one naming its tensors: every request succeeds with E2E
// only (nothing streamed, no output tokens), env.json names the model
// from its metadata, and each fault a whole reply can show is classified.
// Not parallel, as the native API runs.
func TestTritonInferRun(t *testing.T) {
	for api, target := range map[string]string{
		"triton-infer": "api: triton-infer, triton: {output: LABEL}",
		"triton-grpc":  "api: triton-grpc, triton: {input: TEXT, output: LABEL}",
	} {
		t.Run(api, func(t *testing.T) { tensorRun(t, target) })
	}
}

// tensorRun is TestTritonInferRun for one target's API and tensors.
func tensorRun(t *testing.T, target string) {
	tests := []struct {
		faults string
		want   record.ErrorKind
	}{
		{"", record.ErrNone},
		{"status503=1", record.ErrHTTP5xx},
		{"status400=1", record.ErrHTTP4xx},
		{"reset=1", record.ErrConnReset},
		{"malformed=1", record.ErrMalformedEvent},
		{"error_event=1", record.ErrHTTP5xx},
	}
	for _, tt := range tests {
		t.Run(tt.faults, func(t *testing.T) {
			faults, err := sim.ParseFaults(tt.faults)
			if err != nil {
				t.Fatal(err)
			}
			p := testPlan(t, fmt.Sprintf(`
target: {url: %s, model: tiny-sim, preflight: false, %s}
load: {concurrency: 2, requests: 6, grace: 5s}
workload: {input_tokens: "uniform(16,64)", output_tokens: "1", ignore_eos: false}
`, rootURL(tinySim(t, faults)), target))
			res, err := Run(context.Background(), p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Summary
			if tt.want != record.ErrNone {
				if s.Requests.Failed != 6 || s.Errors[string(tt.want)] != 6 {
					t.Errorf("requests %+v errors %v: want all 6 classified %s", s.Requests, s.Errors, tt.want)
				}
				return
			}
			if s.Requests.Succeeded != 6 || s.Metrics.E2E.Count != 6 || s.Metrics.TTFT.Count != 0 || s.Tokens.OutputTotal != 0 {
				t.Errorf("requests %+v, E2E n %d, TTFT n %d, output tokens %d: want 6 ok, E2E only, no output",
					s.Requests, s.Metrics.E2E.Count, s.Metrics.TTFT.Count, s.Tokens.OutputTotal)
			}
			env := readEnv(t, res.Dir)
			if env.Target.Stream || len(env.Target.Served.Models) != 1 || env.Target.Served.Models[0].ID != "tiny-sim" {
				t.Errorf("env.json target %+v: want stream false and the model from /v2/models", env.Target)
			}
			expectRebuildIdentical(t, res.Dir)
		})
	}
}

// The http API templating the simulator's TGI stream gives the same
// figures as the tgi API: one user, so both runs see the same draws.
func TestHTTPAPIRunMatchesTGI(t *testing.T) {
	run := func(target string) *Outcome {
		p := testPlan(t, fmt.Sprintf(`
target: {url: %s, model: tiny-sim, %s}
load: {concurrency: 1, requests: 8}
workload: {input_tokens: "uniform(16,64)", output_tokens: "12", seed: 3}
`, rootURL(tinySim(t, sim.Faults{})), target))
		res, err := Run(context.Background(), p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	tgi := run(`api: tgi`).Summary
	res := run(`api: http, http: {path: /generate_stream, response: sse, text: token.text, tokens: details.generated_tokens, error: error,
    body: '{"inputs":"{{prompt}}","parameters":{"max_new_tokens":{{max_tokens}},"details":true}}'}`)
	got := res.Summary
	if got.Requests.Succeeded != 8 || tgi.Requests.Succeeded != 8 {
		t.Fatalf("http %+v %v; tgi %+v %v: want 8 ok each", got.Requests, got.Errors, tgi.Requests, tgi.Errors)
	}
	if got.Tokens.OutputTotal != tgi.Tokens.OutputTotal || got.Tokens.UsageReported != 8 || got.Metrics.TTFT.Count != 8 ||
		got.Metrics.ITL.Count != tgi.Metrics.ITL.Count {
		t.Errorf("http: output %d, usage %d, TTFT n %d, ITL n %d; tgi: output %d, ITL n %d",
			got.Tokens.OutputTotal, got.Tokens.UsageReported, got.Metrics.TTFT.Count, got.Metrics.ITL.Count,
			tgi.Tokens.OutputTotal, tgi.Metrics.ITL.Count)
	}
	expectRebuildIdentical(t, res.Dir)
}

// readEnv reads a run's env.json.
func readEnv(t *testing.T, dir string) Environment {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, rundir.Env))
	if err != nil {
		t.Fatal(err)
	}
	var env Environment
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatal(err)
	}
	return env
}

// TestHTTPAPIClassifierHasNoTokens: a templated API in front of an image
// classifier (no {{prompt}} in its body, a JSON verdict with no text or
// tokens path) sends no prompt and gets no text: the run has no token
// figures and no token warnings, and its service, no known server, is
// not scraped for /metrics by default.
func TestHTTPAPIClassifierHasNoTokens(t *testing.T) {
	t.Parallel()
	var scraped atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			scraped.Add(1)
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"label": "cat", "score": 0.93}`)
	}))
	t.Cleanup(srv.Close)
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s, api: http, http: {path: /classify, body: '{"image": "{{image}}", "id": "{{request_id}}"}'}}
load: {concurrency: 2, requests: 12}
workload: {input_tokens: "256", output_tokens: "64", images: {count: 1, size: 8x8, format: png}, seed: 1}
`, srv.URL))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Requests.Succeeded != 12 || !s.Tokenless() || s.Throughput.InputTokensPerS != 0 || s.Throughput.OutputTokensPerS != 0 {
		t.Errorf("requests %+v, tokens %+v, throughput %+v: want 12 ok and no tokens", s.Requests, s.Tokens, s.Throughput)
	}
	for _, w := range s.Warnings {
		if strings.Contains(w, "stream") || strings.Contains(w, "usage") || strings.Contains(w, "ignore_eos") || strings.Contains(w, "scrape") {
			t.Errorf("token or scrape warning on a classifier: %q", w)
		}
	}
	if n := scraped.Load(); n != 0 {
		t.Errorf("the service was scraped %d times: a templated API is not scraped by default", n)
	}
	expectRebuildIdentical(t, res.Dir)
}
