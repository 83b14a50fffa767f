package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/workload"
)

// classesPlan mixes short chats with long completions that share a system
// prompt, plus 20% bad input, against a model with a 2048-token context.
const classesPlan = `
target: {url: %s, body: {temperature: 0.5}}
load: {concurrency: 4, requests: %d, grace: 10s}
workload:
  seed: %d
  classes:
    - {name: short, weight: 3, input_tokens: 32, output_tokens: 16}
    - name: long
      weight: 1
      input_tokens: uniform(950,1000)
      output_tokens: 16
      api: completions
      body: {temperature: 0, top_p: 0.9}
      shared_prefix: {tokens: 64, groups: 2}
  length_buckets: [100, 1000]
  bad_input: {fraction: 0.2, max_context: 2048}
`

// The same plan and seed render byte-identical request bodies, each class
// with its own API and body fields; another seed renders other bodies.
func TestClassBodiesDeterministic(t *testing.T) {
	t.Parallel()
	empty := map[int]bool{} // empty prompts are the same whatever the seed
	render := func(seed int) [][]byte {
		p := testPlan(t, fmt.Sprintf(classesPlan, "http://127.0.0.1:1/v1", 10, seed))
		src, err := newSource(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := newRenderer(p)
		out := make([][]byte, 400)
		for i := range out {
			s := src.Spec(uint64(i))
			req, err := r(s)
			if err != nil {
				t.Fatal(err)
			}
			checkClassBody(t, s, req)
			empty[i] = empty[i] || s.BadInput == workload.BadEmpty
			out[i] = req.Body
		}
		return out
	}
	a, b, c := render(1), render(1), render(2)
	same := 0
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("request %d: same plan and seed, different bodies:\n%s\n%s", i, a[i], b[i])
		}
		if bytes.Equal(a[i], c[i]) && !empty[i] {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d of %d bodies did not change with the seed", same, len(a))
	}
}

// checkClassBody checks that a request went out as its class says.
func checkClassBody(t *testing.T, s workload.Spec, req *protocol.Request) {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatalf("request %d: %v", s.Index, err)
	}
	wantAPI, wantTemp := protocol.APIChat, 0.5
	if s.Class == "long" {
		wantAPI, wantTemp = protocol.APICompletions, 0
	}
	if req.API != wantAPI || body["temperature"] != wantTemp {
		t.Errorf("request %d of class %s: API %s temperature %v", s.Index, s.Class, req.API, body["temperature"])
	}
	// max_tokens 0 is sent as such, not left out; huge ones do not
	// preallocate their events.
	if s.BadInput == workload.BadZeroMaxTokens && body["max_tokens"] != 0.0 {
		t.Errorf("request %d: max_tokens %v, want an explicit 0", s.Index, body["max_tokens"])
	}
	if req.EventsCap > maxEventsCap {
		t.Errorf("request %d: events capacity %d", s.Index, req.EventsCap)
	}
}

// End to end against the simulator: per-class figures, bad input refused
// with 400s counted as expected rejections (not failures), breakdowns by
// input length, and a rebuild that matches the live summary byte for byte.
func TestClassesAgainstSimulator(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	p := testPlan(t, fmt.Sprintf(classesPlan, url, 200, 1))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	short, long, bad := s.Classes["short"], s.Classes["long"], s.Classes[workload.BadInputClass]
	if short == nil || long == nil || bad == nil || len(s.Classes) != 3 {
		t.Fatalf("classes %v", s.Classes)
	}
	// Ordinary classes all succeed; long prompts take longer to prefill.
	if short.Requests.Failed+long.Requests.Failed != 0 || short.Requests.Succeeded < 80 || long.Requests.Succeeded < 20 {
		t.Errorf("short %+v long %+v errors %v", short.Requests, long.Requests, s.Errors)
	}
	if short.Metrics.TTFT.Count != short.Requests.Succeeded || long.Metrics.TTFT.P50 <= short.Metrics.TTFT.P50 {
		t.Errorf("TTFT short %+v long %+v", short.Metrics.TTFT, long.Metrics.TTFT)
	}
	// The simulator refuses too-long prompts and max_tokens 0 or huge with
	// a 400: passes. It accepts empty and odd-Unicode prompts: successes.
	if bad.Requests.Failed != 0 || bad.Requests.ExpectedRejections < 10 || bad.Requests.Succeeded < 5 {
		t.Errorf("bad input %+v errors %v", bad.Requests, bad.Errors)
	}
	if s.Requests.Failed != 0 || s.FailureRate != 0 || s.Requests.ExpectedRejections != bad.Requests.ExpectedRejections {
		t.Errorf("run %+v failure rate %v", s.Requests, s.FailureRate)
	}
	// Buckets: ≤100 holds the short and the short bad requests, >1000 the
	// long ones (prefix included) and the beyond-context ones.
	if len(s.InputBuckets) != 3 || s.InputBuckets[1].Requests.Total != 0 ||
		s.InputBuckets[2].Requests.Succeeded != long.Requests.Succeeded ||
		s.InputBuckets[0].Requests.Total+s.InputBuckets[2].Requests.Total != s.Requests.Total {
		t.Errorf("buckets %+v", s.InputBuckets)
	}
	expectRebuildIdentical(t, res.Dir)
	checkRecordsExpect(t, res.Dir)
}

// checkRecordsExpect: bad-input records carry their expectation, others none.
func checkRecordsExpect(t *testing.T, dir string) {
	t.Helper()
	eachRecord(t, dir, func(r *record.Result) error {
		if (r.Class == workload.BadInputClass) != (r.Expect == record.ExpectRejection) {
			t.Errorf("record %d of class %s expects %q", r.ID, r.Class, r.Expect)
		}
		return nil
	})
}
