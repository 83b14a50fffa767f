package experiment

import (
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// TestServerTimeMatchesSimulatorTruth runs against the simulator, which
// reports every request's exact queue, prefill and decode times (the
// ground truth) keyed by the x-request-id inferload sent. Each record must
// carry its join key and the server's figures to within 1 ms of the
// truth, and the summary's server_time must cover every success.
func TestServerTimeMatchesSimulatorTruth(t *testing.T) {
	t.Parallel()
	url, truth := queuingSim(t, sim.Config{}) // 6 users on 2 slots: some requests queue
	res := runPlan(t, fmt.Sprintf(`
name: servertime
target: {url: %s, model: tiny-sim}
load: {concurrency: 6, requests: 60}
workload: {input_tokens: "32", output_tokens: "8"}
`, url))
	run := filepath.Base(res.Dir)
	within := func(us int64, d time.Duration) bool { return max(us-d.Microseconds(), d.Microseconds()-us) <= 1000 }
	n, queued := 0, 0
	eachRecord(t, res.Dir, func(r *record.Result) error {
		if !r.OK() {
			return nil
		}
		n++
		id := record.TraceID(run, r.ID)
		if r.TraceID != hex.EncodeToString(id[:]) {
			t.Errorf("record %d: trace_id %q, want %x", r.ID, r.TraceID, id)
		}
		tr, ok := truth.get(r.TraceID)
		switch {
		case !ok:
			t.Errorf("record %d: the simulator never saw x-request-id %s", r.ID, r.TraceID)
		case r.Server == nil:
			t.Errorf("record %d: no server timings", r.ID)
		case !within(r.Server.QueueUS, tr.Queue) || !within(r.Server.PrefillUS, tr.Prefill) || !within(r.Server.DecodeUS, tr.Decode):
			t.Errorf("record %d: server %+v, truth %+v", r.ID, *r.Server, tr)
		}
		if tr.Queue > time.Millisecond {
			queued++
		}
		return nil
	})
	st := res.Summary.ServerTime
	if st == nil || st.Requests != int64(n) || st.QueueMS == nil {
		t.Fatalf("server_time %+v, want %d requests with a queue figure", st, n)
	}
	if queued == 0 {
		t.Error("6 users on 2 slots, yet no request queued for over 1 ms")
	}
	expectRebuildIdentical(t, res.Dir)
}
