package experiment

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// An open loop against a server slower than the offered rate, through an
// in-flight cap of 1: requests queue in the client, the queue delay is
// reported, and every latency counts from the intended time, so the slowness
// shows instead of being hidden (no coordinated omission).
func TestOpenLoopAgainstSlowServerCountsFromIntendedTime(t *testing.T) {
	t.Parallel()
	const service = 30 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(service) // the server's processing time, not synchronisation
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	// 10 requests due 5 ms apart, served one at a time in 30 ms each.
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s/v1}
load: {rate: 200, arrival: constant, requests: 10, max_in_flight: 1, late_after: 10ms}
workload: {input_tokens: "4", output_tokens: "1"}
`, srv.URL))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var last *record.Result
	eachRecord(t, res.Dir, func(r *record.Result) error {
		if r.ID == 9 {
			c := *r
			last = &c
		}
		return nil
	})
	if last == nil {
		t.Fatal("request 9 was not recorded")
	}
	// Request 9 was due at 45 ms but waited for 9 services of 30 ms: its
	// queue delay is at least 9×30−45 = 225 ms, and its TTFT includes it.
	if min := (9*service - 45*time.Millisecond).Microseconds(); last.QueueDelayUS < min || last.TTFTUS < last.QueueDelayUS+service.Microseconds() {
		t.Errorf("request 9: queue delay %dµs (want >= %dµs), ttft %dµs (want >= queue delay + service)", last.QueueDelayUS, min, last.TTFTUS)
	}
	s := res.Summary
	if s.Metrics.QueueDelay.Count != 10 || s.Metrics.QueueDelay.Max < 225 || s.Requests.Late < 8 {
		t.Errorf("queue delay %+v late %d: want 10 samples, max >= 225 ms, most requests late", s.Metrics.QueueDelay, s.Requests.Late)
	}
	if s.Metrics.TTFT.Max < s.Metrics.QueueDelay.Max {
		t.Errorf("TTFT max %.1f ms below queue delay max %.1f ms: latency does not count from the intended time", s.Metrics.TTFT.Max, s.Metrics.QueueDelay.Max)
	}
}
