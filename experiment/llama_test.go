package experiment

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/inferload/inferload/capacity"
	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
)

// TestLlamaMeasurementAgreement: against a real llama-server (one slot,
// one thread, one user, so nothing waits for a slot), what inferload
// measures agrees with the server's own account of every request: the
// output is exactly the tokens asked for, the time to first token beyond
// the server's prompt time ("outside the server": loopback HTTP and the
// server's own request handling) is a few milliseconds, and each request's
// TPOT is the server's predicted_ms ÷ (predicted_n − 1), and the first
// token to the end of the reply is the server's predicted_ms (the end is
// stamped as tokens are). Bounds are loose enough for a busy host (seen on
// a quiet one: outside p50 0.5–1.3 ms, TPOT within 0.01 ms, end +55 µs).
func TestLlamaMeasurementAgreement(t *testing.T) {
	t.Parallel()
	s := enginetest.StartLlama(t, enginetest.Llama{Model: "tiny", Slots: 1})
	res := runPlan(t, fmt.Sprintf(`
name: llama-agreement
target: {url: %s/v1, model: tiny}
load: {concurrency: 1, requests: 24}
workload: {input_tokens: "64", output_tokens: "16"}
`, s.URL))
	sum := res.Summary
	if sum.Requests.Succeeded != 24 || sum.ServerTime == nil || sum.ServerTime.Requests != 24 {
		t.Fatalf("succeeded %d, server_time %+v: want 24 requests, each with the server's timings\n%s",
			sum.Requests.Succeeded, sum.ServerTime, s.Log())
	}
	if sum.Tokens.Source != record.SourceUsage || sum.Tokens.OutputTotal != 24*16 {
		t.Errorf("tokens %+v: want 384 output tokens by usage", sum.Tokens)
	}
	a, err := enginetest.MeasureAgreement(res.Dir, sum)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("outside the server p50 %.2f ms, p99 %.2f ms; TPOT against the server's: median %.2f%%, max %.2f%%; end against the server's: p50 %+d µs",
		a.OutsideP50MS, a.OutsideP99MS, a.TPOTErrMedian*100, a.TPOTErrMax*100, a.EndErrMedianUS)
	if a.OutsideP50MS < -1 || a.OutsideP50MS > 20 {
		t.Errorf("outside the server p50 %.2f ms: want 0-20 ms (network and HTTP on loopback)", a.OutsideP50MS)
	}
	if a.Timed != 24 {
		t.Fatalf("%d records with TPOT and server decode timings, want 24", a.Timed)
	}
	if a.TPOTErrMedian > 0.05 {
		t.Errorf("TPOT differs from the server's predicted_ms/(predicted_n-1) by %.1f%% at the median: want within 5%%", a.TPOTErrMedian*100)
	}
	if med := a.EndErrMedianUS; med < -5000 || med > 5000 {
		t.Errorf("first token to end of reply differs from the server's predicted_ms by %+d µs at the median: want within 5 ms (the end is stamped as tokens are)", med)
	}
}

// TestLlamaCalibrateLearnsSlots: a sweep of a real llama-server with 2
// slots (1, 2 and 4 users) is calibrated from a base that allows 256
// sequences: the fitted profile holds max_num_seqs 2, the most requests
// the server's scraped requests_processing showed while 4 users were
// offered, and its YAML loads without the base.
func TestLlamaCalibrateLearnsSlots(t *testing.T) {
	t.Parallel()
	s := enginetest.StartLlama(t, enginetest.Llama{Model: "tiny", Slots: 2})
	p := testPlan(t, fmt.Sprintf("name: llama-cal\ntarget: {url: %s/v1, model: tiny}\nworkload: {input_tokens: \"64\", output_tokens: \"16\"}\nobserve: {interval: 250ms}\nload:\n  concurrency: 1\n  warmup: 500ms\n  grace: 10s\n", s.URL))
	out, err := Sweep(context.Background(), p, Options{Env: testEnv()}, SweepOptions{Mode: record.ModeClosed, Loads: []float64{2, 4},
		StepDuration: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := sim.LookupProfile("cpu-small")
	base.MaxNumSeqs = 256
	cal, err := calibrate(out.Dir, base)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s; fitted costs %+v", cal.Learned, cal.Profile.Cost)
	if cal.Profile.MaxNumSeqs != 2 {
		t.Errorf("max_num_seqs %d, want 2 (the server's slots): %s", cal.Profile.MaxNumSeqs, cal.Learned)
	}
	raw, err := capacity.FittedYAML(cal.Profile, "a-file-that-is-gone.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := sim.ParseProfile(raw); err != nil || got.MaxNumSeqs != 2 {
		t.Errorf("the fitted profile does not load on its own: %v, max_num_seqs %d", err, got.MaxNumSeqs)
	}
}

// TestLlamaWaitForASlotIsInferred: 4 users on a real llama-server with 1
// slot wait for it before the server starts their prompt, and llama.cpp
// reports no queue time. The summary infers the wait (time outside the
// server beyond its floor): each request waits about 3 others' service
// (prefill + decode), so the wait's p50 lies between 2 and 4 service
// times, and the floor left outside the server is loopback HTTP: a small
// part of one service (1.4 ms beside 178 on a quiet host; 71 beside 730
// with the host's two cores shared by four builds).
func TestLlamaWaitForASlotIsInferred(t *testing.T) {
	t.Parallel()
	s := enginetest.StartLlama(t, enginetest.Llama{Model: "tiny", Slots: 1})
	res := runPlan(t, fmt.Sprintf(`
name: llama-wait
target: {url: %s/v1, model: tiny}
load: {concurrency: 4, requests: 40}
workload: {input_tokens: "64", output_tokens: "16"}
`, s.URL))
	st := res.Summary.ServerTime
	if st == nil || st.WaitMS == nil {
		t.Fatalf("server_time %+v: want an inferred wait", st)
	}
	service := st.PrefillMS.P50 + st.DecodeMS.P50
	t.Logf("wait p50 %.1f ms, p90 %.1f ms; service p50 %.1f ms; floor %.2f ms", st.WaitMS.P50, st.WaitMS.P90, service, st.OutsideFloorMS)
	if st.WaitMS.P50 < 2*service || st.WaitMS.P50 > 4*service {
		t.Errorf("inferred wait p50 %.1f ms: want 2-4 service times (%.1f ms each) for 4 users on 1 slot", st.WaitMS.P50, service)
	}
	if st.OutsideFloorMS < 0 || st.OutsideFloorMS > service/4 {
		t.Errorf("floor outside the server %.2f ms: want 0 to a quarter of a service (%.1f ms) on loopback", st.OutsideFloorMS, service)
	}
}

// BenchmarkLlamaEndAtStreams (BENCHMARKS.md, "E2E against a real server"):
// 16 closed-loop streams on a 16-slot llama-server; reports the median and
// P90 over the measured requests of the client's first token → end of
// reply against the server's predicted_ms (enginetest.EndAgainstServer), and the
// same for TTFT beyond the server's prompt_ms. Target: median within 1 ms.
func BenchmarkLlamaEndAtStreams(b *testing.B) {
	s := enginetest.StartLlama(b, enginetest.Llama{Model: "tiny", Slots: 16})
	p := testPlan(b, fmt.Sprintf(`
name: llama-end-at-16
target: {url: %s/v1, model: tiny}
load: {concurrency: 16, requests: 320}
workload: {input_tokens: "64", output_tokens: "16"}
`, s.URL))
	for b.Loop() {
		res, err := Run(context.Background(), p, Options{Env: testEnv()})
		if err != nil {
			b.Fatal(err)
		}
		var end, ttft []int64
		_, err = rundir.ReadRecords(filepath.Join(res.Dir, rundir.Records), func(r *record.Result) error {
			if r.Server != nil && !r.Warmup && r.OK() {
				end = append(end, enginetest.EndAgainstServer(r))
				ttft = append(ttft, r.TTFTUS-r.Server.PrefillUS)
			}
			return nil
		})
		if err != nil || len(end) == 0 {
			b.Fatalf("records: %v (%d with server timings)", err, len(end))
		}
		slices.Sort(end)
		slices.Sort(ttft)
		n := len(end)
		b.ReportMetric(float64(end[n/2])/1e3, "end-err-p50-ms")
		b.ReportMetric(float64(end[n*9/10])/1e3, "end-err-p90-ms")
		b.ReportMetric(float64(ttft[n/2])/1e3, "ttft-outside-p50-ms")
		b.ReportMetric(float64(n), "requests")
	}
}
