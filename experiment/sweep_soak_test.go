package experiment

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// slowingServer streams 4 tokens whose gaps grow with the time since the
// server started: from 2 ms to 2+growth ms over span, a planted slow
// degradation (a leak, fragmentation) for a soak to find.
func slowingServer(t *testing.T, growth, span time.Duration) string {
	t.Helper()
	start := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		frac := min(time.Since(start).Seconds()/span.Seconds(), 1)
		gap := 2*time.Millisecond + time.Duration(frac*float64(growth))
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for i := range 4 {
			select {
			case <-time.After(gap):
			case <-r.Context().Done():
				return
			}
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
			fl.Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":4}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestSoakFindsPlantedDegradation: a server that slows from 8 ms to 248 ms
// per reply (2 ms to 62 ms per token) over a 3 s soak cut into 250 ms
// windows: P99 E2E rose and throughput fell (significant, drifted); the
// failure rate (all 0) did not move. Eight users keep enough replies in
// every window for its P99 to follow the trend. P99 TTFT is tested too, but
// a busy machine's scheduling spikes (tens of ms) can hide its smaller
// rise, so only its presence is checked. Not parallel: it measures time, so
// it runs before the parallel tests load the machine.
func TestSoakFindsPlantedDegradation(t *testing.T) {
	url := slowingServer(t, 60*time.Millisecond, 3*time.Second)
	p := testPlan(t, fmt.Sprintf(`
name: soak
target: {url: %s, model: m}
workload: {input_tokens: "8", output_tokens: "4"}
load: {concurrency: 8, duration: 3s, warmup: 250ms, grace: 5s}
`, url))
	out, err := Soak(context.Background(), p, Options{}, SoakOptions{Window: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := out.Summary.Soak
	if s == nil || len(s.Windows) < 9 {
		t.Fatalf("soak %+v: want at least 9 windows", s)
	}
	want := map[string]struct {
		drifted bool
		verdict string
	}{
		"P99 E2E":      {true, "P99 E2E rose"},    // the planted degradation
		"P99 TTFT":     {false, "P99 TTFT"},       // present; see above
		"throughput":   {true, "throughput fell"}, // a closed loop slows with the server
		"failure rate": {false, "no significant trend"},
	}
	for _, d := range s.Drift {
		w, ok := want[d.Metric]
		if !ok {
			t.Errorf("unexpected drift metric %q", d.Metric)
			continue
		}
		if (d.Drifted != w.drifted && d.Metric != "P99 TTFT") || !strings.Contains(d.Verdict, w.verdict) {
			t.Errorf("%s: drifted %v, verdict %q; want %v with %q", d.Metric, d.Drifted, d.Verdict, w.drifted, w.verdict)
		}
		delete(want, d.Metric)
	}
	if len(want) > 0 {
		t.Errorf("no drift verdict for %v", want)
	}
}

// TestSoakRejectsBadWindow: a soak needs a window.
func TestSoakRejectsBadWindow(t *testing.T) {
	t.Parallel()
	p := testPlan(t, "target: {url: http://127.0.0.1:1/v1}\nload: {concurrency: 1}\n")
	if _, err := Soak(context.Background(), p, Options{}, SoakOptions{}); err == nil || !strings.Contains(err.Error(), "window") {
		t.Errorf("err = %v, want one about the window", err)
	}
}
