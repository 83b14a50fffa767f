package experiment

import (
	"context"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// nativeAPIs are the servers' own APIs the simulator speaks, each with the
// faults whose classification differs from the OpenAI APIs' because the
// API cannot show them (docs/apis.md says why).
var nativeAPIs = []struct {
	api string
	// differs maps "fault/stream" to the kind expected instead
	// (record.ErrNone: the fault cannot be seen, the request succeeds).
	differs map[string]record.ErrorKind
	// usage: the API reports output token counts (else they are counted).
	usage bool
}{
	{"tgi", nil, true},
	{"ollama", nil, true},
	{"ollama-generate", nil, true},
	// The generate extension has no end marker: a stream that ends early
	// but cleanly is a (short) success.
	{"triton", map[string]record.ErrorKind{"missing_done=1/stream=true": record.ErrNone}, false},
	// Over gRPC, as over HTTP: a stream that ends without its final
	// response but cleanly is a (short) success.
	{"triton-grpc", map[string]record.ErrorKind{"missing_done=1/stream=true": record.ErrNone}, false},
	// TorchServe's output is opaque: nothing malformed can be seen, and a
	// failure mid-stream cuts the chunked body.
	{"torchserve", map[string]record.ErrorKind{
		"malformed=1/stream=true": record.ErrNone, "malformed=1/stream=false": record.ErrNone,
		"missing_done=1/stream=true": record.ErrNone, "error_event=1/stream=true": record.ErrConnReset,
	}, false},
}

// rootURL is a simulator's server root, where the native APIs live.
func rootURL(v1 string) string { return strings.TrimSuffix(v1, "/v1") }

// Every native API's client, against the simulator speaking that API,
// classifies every fault the simulator injects, streaming or not. Not
// parallel: its runs go before the parallel tests start, so they never
// starve this package's timing-sensitive tests on a small machine.
func TestNativeAPIFaultsAreClassified(t *testing.T) {
	for _, a := range nativeAPIs {
		for _, f := range simFaults {
			want := f.want
			key := fmt.Sprintf("%s/stream=%v", f.faults, f.stream)
			if k, ok := a.differs[key]; ok {
				want = k
			}
			t.Run(a.api+"/"+key, func(t *testing.T) {
				faults, err := sim.ParseFaults(f.faults)
				if err != nil {
					t.Fatal(err)
				}
				p := testPlan(t, fmt.Sprintf(`
target:
  url: %s
  api: %s
  model: tiny-sim
  stream: %v
  preflight: false
  %s
load: {concurrency: 2, requests: 4, grace: 5s}
workload: {input_tokens: "16", output_tokens: "32"}
`, rootURL(tinySim(t, faults)), a.api, f.stream, f.extra))
				res, err := Run(context.Background(), p, Options{})
				if err != nil {
					t.Fatal(err)
				}
				s := res.Summary
				if want == record.ErrNone {
					if s.Requests.Failed != 0 {
						t.Errorf("requests %+v errors %v: want none failed (the API cannot show this fault)", s.Requests, s.Errors)
					}
					return
				}
				if s.Requests.Failed != 4 || s.Errors[string(want)] != 4 {
					t.Errorf("requests %+v errors %v: want all 4 classified %s", s.Requests, s.Errors, want)
				}
			})
		}
	}
}

// Against a healthy simulator every native API's requests succeed, with
// the token counts the API reports (or counted, where it reports none),
// streaming and not. Not parallel, as above.
func TestNativeAPIHealthyRun(t *testing.T) {
	for _, a := range nativeAPIs {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", a.api, stream), func(t *testing.T) {
				p := testPlan(t, fmt.Sprintf(`
target: {url: %s, api: %s, model: tiny-sim, stream: %v}
load: {concurrency: 4, requests: 20}
workload: {input_tokens: "uniform(16,64)", output_tokens: "12"}
`, rootURL(tinySim(t, sim.Faults{})), a.api, stream))
				res, err := Run(context.Background(), p, Options{})
				if err != nil {
					t.Fatal(err)
				}
				s := res.Summary
				if s.Requests.Succeeded != 20 {
					t.Fatalf("requests %+v errors %v: want 20 ok", s.Requests, s.Errors)
				}
				if s.Tokens.OutputTotal == 0 || a.usage != (s.Tokens.UsageReported == 20) {
					t.Errorf("tokens %+v: want output, usage reported by all 20: %v", s.Tokens, a.usage)
				}
				expectRebuildIdentical(t, res.Dir)
			})
		}
	}
}

// nativeTruth runs plan text (with %s for the simulator's root URL)
// against a simulator that queues, returning each successful record and
// the engine's truth for it, joined by x-request-id.
func nativeTruth(t *testing.T, planText string) ([]*record.Result, *truthLog) {
	t.Helper()
	url, truth := queuingSim(t, sim.Config{})
	res, err := Run(context.Background(), testPlan(t, fmt.Sprintf(planText, rootURL(url))), Options{Env: testEnv()})
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Base(res.Dir)
	var ok []*record.Result
	eachRecord(t, res.Dir, func(r *record.Result) error {
		if id := record.TraceID(run, r.ID); r.OK() && r.TraceID == hex.EncodeToString(id[:]) {
			ok = append(ok, r)
		}
		return nil
	})
	return ok, truth
}

// TGI's /generate timing headers carry the engine's truth in whole
// milliseconds: every record's queue and inference (prefill + decode)
// must be within 1 ms of it.
func TestTGIServerTimeMatchesSimulatorTruth(t *testing.T) {
	t.Parallel()
	recs, truth := nativeTruth(t, `
target: {url: %s, api: tgi, model: tiny-sim, stream: false}
load: {concurrency: 6, requests: 30}
workload: {input_tokens: "32", output_tokens: "8"}
`)
	if len(recs) != 30 {
		t.Fatalf("%d successful records with a join key, want 30", len(recs))
	}
	within := func(us int64, d time.Duration) bool { return max(us-d.Microseconds(), d.Microseconds()-us) <= 1000 }
	for _, r := range recs {
		tr, ok := truth.get(r.TraceID)
		switch {
		case !ok:
			t.Errorf("record %d: no truth for %s", r.ID, r.TraceID)
		case r.Server == nil || !r.Server.HasQueue:
			t.Errorf("record %d: no server timings: %+v", r.ID, r.Server)
		case !within(r.Server.QueueUS, tr.Queue) || !within(r.Server.InferenceUS, tr.Prefill+tr.Decode):
			t.Errorf("record %d: server %+v, truth %+v", r.ID, *r.Server, tr)
		}
	}
}

// Ollama's final object carries the engine's prefill and decode
// (prompt_eval_duration, eval_duration) in nanoseconds: every record's
// must match the truth, and the summary's server_time covers them all.
func TestOllamaServerTimeMatchesSimulatorTruth(t *testing.T) {
	t.Parallel()
	recs, truth := nativeTruth(t, `
target: {url: %s, api: ollama, model: tiny-sim}
load: {concurrency: 6, requests: 30}
workload: {input_tokens: "32", output_tokens: "8"}
`)
	if len(recs) != 30 {
		t.Fatalf("%d successful records with a join key, want 30", len(recs))
	}
	within := func(us int64, d time.Duration) bool { return max(us-d.Microseconds(), d.Microseconds()-us) <= 1 }
	for _, r := range recs {
		tr, ok := truth.get(r.TraceID)
		switch {
		case !ok:
			t.Errorf("record %d: no truth for %s", r.ID, r.TraceID)
		case r.Server == nil || r.Server.HasQueue:
			t.Errorf("record %d: server timings %+v, want prefill and decode without a queue", r.ID, r.Server)
		case !within(r.Server.PrefillUS, tr.Prefill) || !within(r.Server.DecodeUS, tr.Decode):
			t.Errorf("record %d: server %+v, truth %+v", r.ID, *r.Server, tr)
		}
	}
}
