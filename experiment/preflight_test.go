package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// TestPreflightStopsADeadTarget: a target that refuses connections, a 404
// for the model, or a failing first request stop the run before a run
// directory exists; --no-preflight (preflight: false) runs regardless.
func TestPreflightStopsADeadTarget(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close() // nothing listens there now
	noModel := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			fmt.Fprint(w, `{"data":[{"id":"llama-3-8b"}]}`)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":{"message":"The model 'gpt-9' does not exist.","code":404}}`)
	}))
	t.Cleanup(noModel.Close)
	tests := []struct {
		name, url, extra string
		kind             record.ErrorKind
		msg              string
	}{
		// Nothing listening: connection refused, said at once.
		{"refused", dead, "", record.ErrConnRefused, "connection refused"},
		// A 404 for the model names the models the target serves.
		{"unknown model", noModel.URL + "/v1", "", record.ErrHTTP4xx, `/models lists llama-3-8b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := testPlan(t, fmt.Sprintf("target: {url: %s, model: gpt-9}\nload: {concurrency: 2, requests: 50}\n", tt.url))
			_, err := Run(context.Background(), p, Options{})
			var pe *PreflightError
			if !errors.As(err, &pe) || pe.Kind != tt.kind || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want a pre-flight %s mentioning %q", err, tt.kind, tt.msg)
			}
			if entries, _ := os.ReadDir(p.Output.Dir); len(entries) != 0 {
				t.Errorf("a run directory was written for a run that never started: %v", entries)
			}
			// With the probe off the run goes ahead and records the failures.
			p.Target.Preflight = new(bool)
			res, err := Run(context.Background(), p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Summary.Errors[string(tt.kind)] != 50 {
				t.Errorf("without pre-flight: errors %v, want 50 %s", res.Summary.Errors, tt.kind)
			}
		})
	}
}

// TestPreflightProbeSharesNoPrompt: the probe's prompt is its own, so a
// server's prefix cache holds nothing of a measured request's after it
// (llama.cpp served the first measured request from its cache when the
// probe sent that request's prompt). The probe asks for one token; the
// measured requests share no prefix with it, shared prefix groups
// included.
func TestPreflightProbeSharesNoPrompt(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var probes, measured []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r) // /models: nothing to tell
			return
		}
		var body struct {
			MaxTokens int `json:"max_tokens"`
			Messages  []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		var prompt strings.Builder
		for _, m := range body.Messages {
			prompt.WriteString(m.Content)
		}
		mu.Lock()
		if body.MaxTokens == 1 {
			probes = append(probes, prompt.String())
		} else {
			measured = append(measured, prompt.String())
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s/v1}
load: {concurrency: 1, requests: 6}
workload: {input_tokens: "64", output_tokens: "4", shared_prefix: {tokens: 32, fraction: 1, groups: 1}}
`, srv.URL))
	if _, err := Run(context.Background(), p, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(probes) != 1 || len(measured) != 6 {
		t.Fatalf("%d probes and %d measured requests, want 1 and 6", len(probes), len(measured))
	}
	for i, m := range measured {
		if n := commonPrefix(probes[0], m); n >= 8 {
			t.Errorf("measured request %d shares %d bytes with the probe %q: %q", i, n, probes[0], m[:min(len(m), 60)])
		}
	}
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestPreflightProbesEveryReplica: with target.replicas, each replica is
// probed; a dead second replica stops the run before anything is written,
// and the error names it (not target.url, which answered).
func TestPreflightProbesEveryReplica(t *testing.T) {
	t.Parallel()
	live := tinySim(t, sim.Faults{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	p := testPlan(t, fmt.Sprintf("target: {url: %s, replicas: [%s]}\nload: {concurrency: 2, requests: 10}\n", live, dead))
	_, err = Run(context.Background(), p, Options{})
	var pe *PreflightError
	if !errors.As(err, &pe) || pe.Kind != record.ErrConnRefused || !strings.Contains(err.Error(), "check target.replicas[0] ("+dead+")") {
		t.Fatalf("err = %v, want a pre-flight connection refused naming target.replicas[0]", err)
	}
	if entries, _ := os.ReadDir(p.Output.Dir); len(entries) != 0 {
		t.Errorf("a run directory was written for a run that never started: %v", entries)
	}
}

// TestPreflightPassesAnEmptyReply: asked for one token, a model may send
// only an end of sequence (a random-weight test model sent a token that
// printed nothing): the server answered, so the run goes ahead, and its
// own requests are judged as usual.
func TestPreflightPassesAnEmptyReply(t *testing.T) {
	t.Parallel()
	var probes sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r) // the environment's probes of other endpoints
			return
		}
		probes.Lock()
		calls++
		probes.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	p := testPlan(t, fmt.Sprintf("target: {url: %s/v1, model: m}\nload: {concurrency: 1, requests: 3}\n", srv.URL))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatalf("a pre-flight answered with an empty reply stopped the run: %v", err)
	}
	probes.Lock()
	n := calls
	probes.Unlock()
	if res.Summary.Errors[string(record.ErrEmptyOutput)] != 3 || n != 4 {
		t.Errorf("errors %v after %d calls: want the 3 measured requests judged empty_output after the probe", res.Summary.Errors, n)
	}
}
