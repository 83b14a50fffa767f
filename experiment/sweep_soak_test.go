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
		if !writeTokenChunks(w, r, 4, gap) {
			return
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":4}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestSoakOverHTTP: a soak of a server that slows from 8 ms to 248 ms
// per reply over 3 s, in wall-clock time, cut into 250 ms windows: every
// metric gets a drift verdict (tested, or why not), and the failure rate,
// with nothing failing, did not drift. Whether a busy host's scheduling
// spikes (tens of ms, stalls that empty a window) hide the planted rise
// is the host's business, so the verdict on the planted degradation, and
// on a steady server, is tested on virtual time
// (TestVirtualSoakFindsPlantedDegradation).
func TestSoakOverHTTP(t *testing.T) {
	t.Parallel()
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
	// judged: the verdict must be drifted as said; otherwise only present.
	want := map[string]struct {
		judged, drifted bool
		verdict         string
	}{
		"failure rate": {true, false, "no significant trend"}, // nothing failed
		"P50 E2E":      {false, false, "P50 E2E"},
		"throughput":   {false, false, "throughput"},
		"P90 E2E":      {false, false, "P90 E2E"},
		"P99 E2E":      {false, false, "P99 E2E"},
		"P50 TTFT":     {false, false, "P50 TTFT"},
		"P90 TTFT":     {false, false, "P90 TTFT"},
		"P99 TTFT":     {false, false, "P99 TTFT"},
	}
	for _, d := range s.Drift {
		w, ok := want[d.Metric]
		if !ok {
			t.Errorf("unexpected drift metric %q", d.Metric)
			continue
		}
		if (w.judged && d.Drifted != w.drifted) || !strings.Contains(d.Verdict, w.verdict) {
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
