package experiment

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"path/filepath"
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// 6 users on 2 slots: some requests queue
	url, truth := queuingSim(t, sim.Config{
		OTLPTracesEndpoint: scheme + "://" + ln.Addr().String(), OTLPExportEvery: 50 * time.Millisecond})
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
	var worstTruth, worstInBand int64 // the largest disagreement seen, µs
	within := func(a, b int64) bool { return max(a-b, b-a) <= 1000 }
	n := 0
	eachRecord(t, res.Dir, func(r *record.Result) error {
		if !r.OK() {
			return nil
		}
		n++
		sp, ok := spans[r.TraceID]
		tr, _ := truth.get(r.TraceID)
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
		default:
			worstTruth = max(worstTruth, absDiff(st.QueueUS, tr.Queue.Microseconds()), absDiff(st.PrefillUS, tr.Prefill.Microseconds()), absDiff(st.DecodeUS, tr.Decode.Microseconds()))
			worstInBand = max(worstInBand, absDiff(st.QueueUS, r.Server.QueueUS), absDiff(st.PrefillUS, r.Server.PrefillUS), absDiff(st.DecodeUS, r.Server.DecodeUS))
		}
		return nil
	})
	t.Logf("%s: %d records; worst span vs truth %d µs, span vs in-band %d µs", scheme, n, worstTruth, worstInBand)
	s := res.Summary
	if s.ServerTime == nil || s.ServerTime.Requests != int64(n) || s.ServerTime.FromSpans != int64(n) {
		t.Errorf("server_time %+v, want %d requests, all from spans", s.ServerTime, n)
	}
	if s.Spans == nil || s.Spans.Joined != int64(n) || s.Spans.Unmatched != 0 || s.Spans.Probe != 1 || s.Spans.Received != int64(n)+1 {
		t.Errorf("spans %+v, want %d joined and the probe's, none unmatched", s.Spans, n)
	}
	expectRebuildIdentical(t, res.Dir)
}

func absDiff(a, b int64) int64 { return max(a-b, b-a) }

// TestSpanWaitEndsWhenEverySpanCame: the wait after a run ends as soon as
// every successful record's span has come (not at its limit), at its
// limit when one never comes, and at once when the run was stopped;
// failed records and records without a join key are owed no span.
func TestSpanWaitEndsWhenEverySpanCame(t *testing.T) {
	t.Parallel()
	out, err := rundir.NewJSONLWriter(filepath.Join(t.TempDir(), rundir.Spans))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	s := &spanReceiver{out: out, seen: map[string]bool{}, pending: map[string]bool{}, changed: make(chan struct{}, 1)}
	us := func(v int64) *int64 { return &v }
	span := func(trace string) record.Span {
		return record.Span{TraceID: trace, Name: "llm_request", PrefillUS: us(1), DecodeUS: us(2)}
	}
	s.onSpan(span("aa")) // a span may come before its record
	s.expect(&record.Result{TraceID: "aa"})
	s.expect(&record.Result{TraceID: "bb"})
	s.expect(&record.Result{TraceID: "cc", Error: record.ErrHTTP5xx})
	s.expect(&record.Result{})
	if got := s.missing(); got != 1 {
		t.Fatalf("missing %d, want 1 (bb)", got)
	}
	done := make(chan struct{})
	go func() { defer close(done); s.wait(context.Background(), time.Hour) }()
	s.onSpan(record.Span{TraceID: "bb", Name: "llm_core"}) // no phases: still owed
	s.onSpan(span("bb"))
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the wait did not end when the last span came")
	}
	s.expect(&record.Result{TraceID: "dd"})
	start := time.Now()
	s.wait(context.Background(), 50*time.Millisecond) // dd never comes
	if el := time.Since(start); el < 50*time.Millisecond {
		t.Errorf("the wait ended after %v, before its 50ms limit, with a span missing", el)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.wait(ctx, time.Hour) // returns at once: a stopped run does not wait
}
