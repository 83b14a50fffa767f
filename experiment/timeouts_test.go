package experiment

import (
	"fmt"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// classTimeoutsPlan sends two classes to a server that takes about 300 ms
// to its first token: "impatient" gives up after 100 ms, "patient" keeps
// the target's 5 s.
const classTimeoutsPlan = `
target: {url: %s/v1, api_key_env: TEST_KEY, timeouts: {ttft: 5s}}
load: {concurrency: 4, requests: 16, grace: 10s}
workload:
  seed: 3
  classes:
    - {name: patient, weight: 1, input_tokens: 16, output_tokens: 2}
    - {name: impatient, weight: 1, input_tokens: 16, output_tokens: 2, timeouts: {ttft: 100ms, connect: 2s}}
`

// A class's timeouts apply to its requests only: against a slow server the
// impatient class times out before its first token and the other succeeds.
func TestClassTimeouts(t *testing.T) {
	t.Parallel()
	// streamServer waits `gap` before each token: 300 ms to the first.
	srv := streamServer(t, 2, 300*time.Millisecond)
	res := runPlan(t, fmt.Sprintf(classTimeoutsPlan, srv.URL))
	patient, impatient := res.Summary.Classes["patient"], res.Summary.Classes["impatient"]
	if patient == nil || impatient == nil {
		t.Fatalf("classes %v: want patient and impatient", res.Summary.Classes)
	}
	if patient.Requests.Succeeded == 0 || patient.Requests.Failed != 0 {
		t.Errorf("patient: %+v errors %v; want all successes", patient.Requests, patient.Errors)
	}
	if impatient.Requests.Failed == 0 || impatient.Requests.Succeeded != 0 ||
		impatient.Errors[string(record.ErrTimeoutBeforeTTFT)] != impatient.Requests.Failed {
		t.Errorf("impatient: %+v errors %v; want every request a timeout before the first token",
			impatient.Requests, impatient.Errors)
	}
}
