package protocol

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// lateFirstToken answers after a delay, then streams two tokens: a server
// slow to start, as a long prefill is.
func lateFirstToken(delay time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		startStream(w, r)
		select {
		case <-time.After(delay): // the server's own slowness, not synchronisation
		case <-r.Context().Done():
			return
		}
		sendEvent(w, chatToken("a"))
		sendEvent(w, chatToken("b"))
		sendEvent(w, "[DONE]")
	}
}

// TestRequestTimeouts proves that Request.Timeouts overrides the client's
// timeouts for one request only, in both directions, so request classes with
// different deadlines can share one client.
func TestRequestTimeouts(t *testing.T) {
	t.Parallel()
	slow := httptest.NewServer(lateFirstToken(300 * time.Millisecond))
	t.Cleanup(slow.Close)
	cases := []struct {
		name   string
		target func(t *testing.T) string
		client OpenAIOptions
		over   *Timeouts
		kind   record.ErrorKind
		msg    string
	}{
		// No override: the client's generous TTFT timeout lets the slow start through.
		{name: "client timeouts", client: OpenAIOptions{TTFTTimeout: 5 * time.Second}, kind: record.ErrNone},
		// A shorter per-request TTFT fires although the client's would not.
		{name: "shorter ttft", client: OpenAIOptions{TTFTTimeout: 5 * time.Second},
			over: &Timeouts{TTFT: 100 * time.Millisecond}, kind: record.ErrTimeoutBeforeTTFT, msg: "TTFT timeout (100ms)"},
		// A longer per-request TTFT lets through what the client's would have cut.
		{name: "longer ttft", client: OpenAIOptions{TTFTTimeout: 100 * time.Millisecond},
			over: &Timeouts{TTFT: 5 * time.Second}, kind: record.ErrNone},
		// A zero field keeps the client's bound: only Total is overridden, the client's TTFT still fires.
		{name: "zero keeps client", client: OpenAIOptions{TTFTTimeout: 100 * time.Millisecond},
			over: &Timeouts{Total: 5 * time.Second}, kind: record.ErrTimeoutBeforeTTFT, msg: "TTFT timeout (100ms)"},
		// A per-request total timeout is reported with its own value.
		{name: "shorter total", client: OpenAIOptions{TotalTimeout: 5 * time.Second},
			over: &Timeouts{Total: 100 * time.Millisecond}, kind: record.ErrTimeoutBeforeTTFT, msg: "total timeout (100ms)"},
		// A per-request connect timeout fires on a target that never accepts, long before the client's 10 s.
		{name: "connect", target: fullBacklogTarget, client: OpenAIOptions{ConnectTimeout: 10 * time.Second},
			over: &Timeouts{Connect: 100 * time.Millisecond}, kind: record.ErrConnectTimeout, msg: "connect timeout (100ms)"},
		// A connect timeout shorter than the whole reply does not fire once connected.
		{name: "connect disarmed", client: OpenAIOptions{}, over: &Timeouts{Connect: 100 * time.Millisecond}, kind: record.ErrNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := tc.client
			opts.BaseURL = slow.URL + "/v1"
			if tc.target != nil {
				opts.BaseURL = tc.target(t)
			}
			c, err := NewOpenAI(opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			req := chatRequest(true)
			req.Timeouts = tc.over
			start := time.Now()
			tr := doTrace(t, c, req)
			if tr.Err != tc.kind || !strings.Contains(tr.ErrMsg, tc.msg) {
				t.Fatalf("got %q %q; want %q with %q", tr.Err, tr.ErrMsg, tc.kind, tc.msg)
			}
			if tc.kind != record.ErrNone && time.Since(start) > 3*time.Second {
				t.Errorf("timed out after %v, want about the override's bound", time.Since(start))
			}
		})
	}
}
