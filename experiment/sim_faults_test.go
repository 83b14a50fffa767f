package experiment

import (
	"context"
	"fmt"
	"testing"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// simFaults are every fault the simulator injects, streamed or not, with
// the kind the OpenAI client gives it; the native APIs' clients give the
// same kinds but where nativeAPIs says otherwise.
var simFaults = []struct {
	faults string
	stream bool
	extra  string // plan lines under target:
	want   record.ErrorKind
}{
	{"status503=1", true, "", record.ErrHTTP5xx},
	{"status429=1", true, "", record.ErrHTTP429},
	{"status400=1", false, "", record.ErrHTTP4xx},
	{"reset=1", true, "", record.ErrConnReset},
	{"reset=1", false, "", record.ErrConnReset},
	{"malformed=1", true, "", record.ErrMalformedEvent},
	{"malformed=1", false, "", record.ErrMalformedEvent},
	{"missing_done=1", true, "", record.ErrStreamIncomplete},
	{"error_event=1", true, "", record.ErrStreamErrorEvent},
	{"error_event=1", false, "", record.ErrHTTP5xx},
	// a stream that stalls after its first tokens runs into the total timeout
	{"stall=1:3s", true, "timeouts: {total: 400ms}", record.ErrTimeoutAfterTTFT},
	// a server that holds the request runs into the TTFT timeout
	{"slow_first_byte=1:3s", true, "timeouts: {ttft: 300ms}", record.ErrTimeoutBeforeTTFT},
}

// Every fault the simulator can inject is observed on the wire by the real
// client and classified as its own kind, streaming or not: the load
// generator's reliability is tested against a server that misbehaves for
// real, not against mocks.
func TestSimulatorFaultsAreClassified(t *testing.T) {
	t.Parallel()
	for _, tt := range simFaults {
		name := fmt.Sprintf("%s/stream=%v", tt.faults, tt.stream)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			faults, err := sim.ParseFaults(tt.faults)
			if err != nil {
				t.Fatal(err)
			}
			url := tinySim(t, faults)
			p := testPlan(t, fmt.Sprintf(`
target:
  url: %s
  stream: %v
  preflight: false
  %s
load: {concurrency: 2, requests: 4, grace: 5s}
workload: {input_tokens: "16", output_tokens: "32"}
`, url, tt.stream, tt.extra))
			res, err := Run(context.Background(), p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Summary
			if s.Requests.Failed != 4 || s.Errors[string(tt.want)] != 4 {
				t.Errorf("requests %+v errors %v: want all 4 classified %s", s.Requests, s.Errors, tt.want)
			}
		})
	}
}

// Against a healthy simulator every request succeeds with exactly the
// tokens asked for, as the server's usage reports them.
func TestSimulatorHealthyRun(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s, model: %s}
load: {rate: 100, arrival: poisson, requests: 60}
workload: {input_tokens: "uniform(16,64)", output_tokens: "24"}
`, url, enginetest.TinyProfile(t).Model))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Requests.Succeeded != 60 || s.Tokens.Source != "usage" || s.Tokens.OutputTotal != 60*24 {
		t.Fatalf("requests %+v tokens %+v errors %v: want 60 successes with 24 usage tokens each", s.Requests, s.Tokens, s.Errors)
	}
	if s.Checks.IgnoreEOSNotHonoured != 0 || s.Metrics.TTFT.Count != 60 || s.Metrics.QueueDelay.Count != 60 {
		t.Errorf("checks %+v ttft n=%d queue n=%d", s.Checks, s.Metrics.TTFT.Count, s.Metrics.QueueDelay.Count)
	}
}
