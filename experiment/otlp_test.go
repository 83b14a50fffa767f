package experiment

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
)

// TestOTLPSpansMatchSimulatorTruth runs against the simulator exporting a
// vLLM-style llm_request span per request to the run's own OTLP receiver,
// over each OTLP transport. Every successful record must get a span that
// continues its traceparent (same trace id, its attempt's span as parent)
// whose queue, prefill and decode are within 1 ms of the simulator's exact
// times and of the reply's in-band timings; server_time must come from the
// spans, none unmatched, and a rebuild must give the same summary.
func TestOTLPSpansMatchSimulatorTruth(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{"http", "grpc"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			checkSpansAgainstTruth(t, scheme)
		})
	}
}

func checkSpansAgainstTruth(t *testing.T, scheme string) {
	var mu sync.Mutex
	truth := map[string]sim.Truth{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	prof := tinyProfile(t)
	prof.MaxNumSeqs = 2 // 6 users on 2 slots: some requests queue
	srv, url, err := sim.Start(sim.Config{Profile: prof, Seed: 1,
		OTLPTracesEndpoint: scheme + "://" + ln.Addr().String(), OTLPExportEvery: 50 * time.Millisecond,
		OnFinish: func(id string, tr sim.Truth) {
			mu.Lock()
			defer mu.Unlock()
			truth[id] = tr
		}}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	p := testPlan(t, fmt.Sprintf(`
name: otlp-%s
target: {url: %s, model: tiny-sim}
load: {concurrency: 6, requests: 60}
workload: {input_tokens: "32", output_tokens: "8"}
observe: {otlp_wait: 60s}
`, scheme, url))
	res, err := Run(context.Background(), p, Options{Env: testEnv(), OTLPListener: ln})
	if err != nil {
		t.Fatal(err)
	}
	spans := map[string]record.Span{}
	if _, err := rundir.ReadSpans(filepath.Join(res.Dir, rundir.Spans), func(s *record.Span) error {
		spans[s.TraceID] = *s
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	within := func(a, b int64) bool { return max(a-b, b-a) <= 1000 }
	n := 0
	_, err = rundir.ReadRecords(filepath.Join(res.Dir, rundir.Records), func(r *record.Result) error {
		if !r.OK() {
			return nil
		}
		n++
		sp, ok := spans[r.TraceID]
		mu.Lock()
		tr := truth[r.TraceID]
		mu.Unlock()
		var trace [16]byte
		_, _ = hex.Decode(trace[:], []byte(r.TraceID))
		parent := record.SpanID(trace, 0)
		st, phases := sp.ServerTime()
		switch {
		case !ok:
			t.Errorf("record %d: no span with trace id %s", r.ID, r.TraceID)
		case sp.Name != "llm_request" || sp.ParentSpanID != hex.EncodeToString(parent[:]):
			t.Errorf("record %d: span %q parent %s, want llm_request under the client's span %x", r.ID, sp.Name, sp.ParentSpanID, parent)
		case !phases || !st.HasQueue:
			t.Errorf("record %d: span without phases: %+v", r.ID, sp)
		case !within(st.QueueUS, tr.Queue.Microseconds()) || !within(st.PrefillUS, tr.Prefill.Microseconds()) || !within(st.DecodeUS, tr.Decode.Microseconds()):
			t.Errorf("record %d: span %+v, truth %+v", r.ID, *st, tr)
		case r.Server == nil || !within(st.QueueUS, r.Server.QueueUS) || !within(st.PrefillUS, r.Server.PrefillUS) || !within(st.DecodeUS, r.Server.DecodeUS):
			t.Errorf("record %d: span %+v disagrees with the in-band timings %+v", r.ID, *st, r.Server)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.ServerTime == nil || s.ServerTime.Requests != int64(n) || s.ServerTime.FromSpans != int64(n) {
		t.Errorf("server_time %+v, want %d requests, all from spans", s.ServerTime, n)
	}
	if s.Spans == nil || s.Spans.Joined != int64(n) || s.Spans.Unmatched != 0 || s.Spans.Probe != 1 || s.Spans.Received != int64(n)+1 {
		t.Errorf("spans %+v, want %d joined and the probe's, none unmatched", s.Spans, n)
	}
	expectRebuildIdentical(t, res.Dir)
}
