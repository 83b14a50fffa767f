package experiment

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// TestLlamaMeasurementAgreement: against a real llama-server (one slot,
// one thread, one user, so nothing waits for a slot), what inferload
// measures agrees with the server's own account of every request: the
// output is exactly the tokens asked for, the time to first token beyond
// the server's prompt time ("outside the server": loopback HTTP and the
// server's own request handling) is a few milliseconds, and each request's
// TPOT is the server's predicted_ms ÷ (predicted_n − 1). Bounds are loose
// enough for a busy host (seen on a quiet one: outside p50 1.3 ms, TPOT
// within 0.01 ms).
func TestLlamaMeasurementAgreement(t *testing.T) {
	t.Parallel()
	s := enginetest.StartLlama(t, enginetest.Llama{Model: "tiny", Slots: 1})
	p := testPlan(t, fmt.Sprintf(`
name: llama-agreement
target: {url: %s/v1, model: tiny}
load: {concurrency: 1, requests: 24}
workload: {input_tokens: "64", output_tokens: "16"}
`, s.URL))
	res, err := Run(context.Background(), p, Options{Env: testEnv()})
	if err != nil {
		t.Fatal(err)
	}
	sum := res.Summary
	if sum.Requests.Succeeded != 24 || sum.ServerTime == nil || sum.ServerTime.Requests != 24 {
		t.Fatalf("succeeded %d, server_time %+v: want 24 requests, each with the server's timings\n%s",
			sum.Requests.Succeeded, sum.ServerTime, s.Log())
	}
	if sum.Tokens.Source != record.SourceUsage || sum.Tokens.OutputTotal != 24*16 {
		t.Errorf("tokens %+v: want 384 output tokens by usage", sum.Tokens)
	}
	if out := sum.ServerTime.OutsideMS; out.P50 < -1 || out.P50 > 20 {
		t.Errorf("outside the server p50 %.2f ms: want 0-20 ms (network and HTTP on loopback)", out.P50)
	}
	var tpotErr []float64
	_, err = rundir.ReadRecords(filepath.Join(res.Dir, rundir.Records), func(r *record.Result) error {
		tpot, ok := record.TPOTUS(r)
		if !ok || r.Server == nil || r.Server.DecodeN < 2 {
			return nil
		}
		server := float64(r.Server.DecodeUS) / float64(r.Server.DecodeN-1)
		tpotErr = append(tpotErr, math.Abs(float64(tpot)-server)/server)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tpotErr) != 24 {
		t.Fatalf("%d records with TPOT and server decode timings, want 24", len(tpotErr))
	}
	slices.Sort(tpotErr)
	t.Logf("outside the server p50 %.2f ms, p99 %.2f ms; TPOT against the server's: median %.2f%%, max %.2f%%",
		sum.ServerTime.OutsideMS.P50, sum.ServerTime.OutsideMS.P99, tpotErr[len(tpotErr)/2]*100, tpotErr[len(tpotErr)-1]*100)
	if med := tpotErr[len(tpotErr)/2]; med > 0.05 {
		t.Errorf("TPOT differs from the server's predicted_ms/(predicted_n-1) by %.1f%% at the median: want within 5%%", med*100)
	}
}
