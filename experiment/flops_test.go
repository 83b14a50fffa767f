package experiment

import (
	"context"
	"fmt"
	"testing"

	"github.com/inferload/inferload/record"
)

// An open loop paced by compute: each request costs 2.2e11 FLOPs at 1B
// parameters (prefill 2·1e9·100, decode 2·1e9·10), so 2.2e13 FLOP/s is 100
// requests/s: constant arrivals 10 ms apart.
func TestFLOPsPacing(t *testing.T) {
	t.Parallel()
	srv, _ := recordingServer(t)
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s/v1}
load: {flops_per_s: 2.2e13, arrival: constant, requests: 20}
workload: {input_tokens: "100", output_tokens: "11"}
compute: {params_b: 1}
`, srv.URL))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Mode != record.ModeOpen || res.Summary.Requests.Succeeded != 20 {
		t.Fatalf("mode %s requests %+v: want 20 open-loop successes", res.Summary.Mode, res.Summary.Requests)
	}
	eachRecord(t, res.Dir, func(r *record.Result) error {
		if want := int64(r.ID) * 10_000; r.IntendedUS < want-1 || r.IntendedUS > want+1 {
			t.Errorf("request %d due at %dµs, want %dµs", r.ID, r.IntendedUS, want)
		}
		return nil
	})
}
