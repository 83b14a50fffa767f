package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
)

// TestRecordsSayTheirClock: records of a real stream carry the clock the
// client stamped them with (kernel where the system gives receive stamps,
// with a read lag) and nothing on the user-space clock. A record whose
// read carried no fresh stamp falls back to the user clock
// (protocol.recordClock), as one of 4 did on a loaded CI host, so with
// kernel stamps most records, not all, must be on the kernel clock, and
// the others say nothing and carry no read lag.
func TestRecordsSayTheirClock(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range 3 {
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	for _, user := range []bool{false, true} {
		c, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: srv.URL + "/v1", UserClock: user})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		want := ""
		if protocol.ClockFor(user) == protocol.ClockKernel {
			want = record.ClockKernel
		}
		// The first request warms the connection (and the kernel's
		// stamping, switched on in the background when first asked for).
		rs := collect(t, Config{Client: c, Source: fixedSource{}, Render: render, Shape: ClosedLoop{Users: 1}, Requests: 9}, context.Background())
		onWant := 0
		for _, r := range rs[1:] {
			fellBack := want != "" && r.Clock == "" && r.ReadLagUS == 0
			if !r.OK() || (r.Clock != want && !fellBack) || (r.Clock == "" && r.ReadLagUS != 0) {
				t.Errorf("user clock %v: record %d: error %q, clock %q, read lag %d µs; want clock %q",
					user, r.ID, r.Error, r.Clock, r.ReadLagUS, want)
			}
			if r.Clock == want {
				onWant++
			}
		}
		if 2*onWant <= len(rs)-1 {
			t.Errorf("user clock %v: %d of %d records on the %q clock, want most", user, onWant, len(rs)-1, want)
		}
	}
}
