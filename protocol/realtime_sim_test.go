package protocol_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// The realtime client against the simulator's WebSocket session: with a
// profile that would write 1000 tokens, max_output_tokens 16 gives 16
// text deltas (TTFT the first), usage 16 and an incomplete response
// (finish length); the simulator's faults arrive classified; a server
// that refuses the upgrade is its HTTP error.
func TestRealtimeAgainstSim(t *testing.T) {
	t.Parallel()
	prof := tinyFixed(t)
	body, err := protocol.OpenAIBody{Prompt: "tell me about the sea", MaxTokens: 16}.Render(protocol.APIRealtime)
	if err != nil {
		t.Fatal(err)
	}
	req := func() *protocol.Request {
		return &protocol.Request{API: protocol.APIRealtime, Body: body, Stream: true, MaxTokens: 16, EventsCap: 16}
	}
	tests := []struct {
		faults string
		want   record.ErrorKind
	}{
		{"", record.ErrNone},
		{"malformed=1", record.ErrMalformedEvent},
		{"error_event=1", record.ErrStreamErrorEvent},
		{"missing_done=1", record.ErrStreamIncomplete},
		{"status429=1", record.ErrHTTP429},
		{"status400=1", record.ErrHTTP4xx},
		{"reset=1", record.ErrConnReset},
		// A stalled session is cut by the total timeout (400 ms) after
		// its first deltas: the timeout closes the connection under the read.
		{"stall=1:3s", record.ErrTimeoutAfterTTFT},
	}
	for _, tc := range tests {
		t.Run(tc.faults, func(t *testing.T) {
			t.Parallel()
			faults, err := sim.ParseFaults(tc.faults)
			if err != nil {
				t.Fatal(err)
			}
			srv, v1 := startProfile(t, prof, faults)
			r := req()
			r.Timeouts = &protocol.Timeouts{Total: 400 * time.Millisecond}
			tr := do(t, simClient(t, protocol.OpenAIOptions{BaseURL: v1, Model: srv.Profile().Model}), r)
			if tr.Err != tc.want {
				t.Fatalf("%s %q, want %s", tr.Err, tr.ErrMsg, tc.want)
			}
			if tc.want != record.ErrNone {
				return
			}
			if tr.ContentEvents != 16 || tr.CompletionTokens != 16 || tr.PromptTokens == 0 || tr.FinishReason != "length" ||
				!tr.SawDone || tr.FirstToken.IsZero() || !tr.FirstToken.Before(tr.End) || tr.FirstToken.Before(tr.Sent) {
				t.Errorf("%d events, usage %d/%d, finish %q, done %v, first %v end %v", tr.ContentEvents, tr.PromptTokens,
					tr.CompletionTokens, tr.FinishReason, tr.SawDone, tr.FirstToken.Sub(tr.Sent), tr.End.Sub(tr.Sent))
			}
		})
	}
	t.Run("event too large", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			defer conn.CloseNow()
			big := `{"type":"response.output_text.delta","delta":"` + strings.Repeat("x", 300<<10) + `"}`
			_ = conn.Write(r.Context(), websocket.MessageText, []byte(big))
			// Read until the client goes: returning on its first message
			// (the request it sends after connecting) closed the socket
			// with that message unread, and the reset cut the big event
			// short on the client's side (connection_reset, not
			// malformed_event), in 1 of some CI runs.
			for {
				if _, _, err := conn.Read(r.Context()); err != nil {
					return
				}
			}
		}))
		t.Cleanup(srv.Close)
		tr := do(t, simClient(t, protocol.OpenAIOptions{BaseURL: srv.URL + "/v1"}), req())
		if tr.Err != record.ErrMalformedEvent {
			t.Errorf("%s %q, want malformed_event for a 300 KiB event", tr.Err, tr.ErrMsg)
		}
	})
	t.Run("no upgrade", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprint(w, `{"error":{"message":"realtime is not served here"}}`)
		}))
		t.Cleanup(srv.Close)
		tr := do(t, simClient(t, protocol.OpenAIOptions{BaseURL: srv.URL + "/v1"}), req())
		if tr.Err != record.ErrHTTP5xx || tr.Status != 503 {
			t.Errorf("%s %d %q, want http_5xx 503", tr.Err, tr.Status, tr.ErrMsg)
		}
	})
}

// BenchmarkRealtimeSession is a whole realtime session over loopback: a
// server sends b.N text deltas then response.done; one op is one event,
// the WebSocket read included (the server's writes share the process,
// so their CPU is in ns/op too).
func BenchmarkRealtimeSession(b *testing.B) {
	delta := []byte(`{"type":"response.output_text.delta","response_id":"resp_1","output_index":0,"content_index":0,"delta":" blue"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		for range 2 {
			if _, _, err := conn.Read(r.Context()); err != nil {
				return
			}
		}
		for range b.N {
			// No context: the library would arm a timer (allocations)
			// per write, which is the test server's cost, not the client's.
			if conn.Write(context.Background(), websocket.MessageText, delta) != nil {
				return
			}
		}
		_ = conn.Write(r.Context(), websocket.MessageText, []byte(`{"type":"response.done","response":{"status":"completed"}}`))
		_ = conn.Close(websocket.StatusNormalClosure, "")
	}))
	defer srv.Close()
	c, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: srv.URL + "/v1"})
	if err != nil {
		b.Fatal(err)
	}
	body, _ := protocol.OpenAIBody{Prompt: "hi", MaxTokens: 16}.Render(protocol.APIRealtime)
	req := &protocol.Request{API: protocol.APIRealtime, Body: body, Stream: true, EventsCap: 16}
	var tr protocol.Trace
	b.ReportAllocs()
	b.ResetTimer()
	c.Do(context.Background(), req, &tr)
	if tr.Err != record.ErrNone || tr.ContentEvents != b.N {
		b.Fatalf("%s %q, %d events", tr.Err, tr.ErrMsg, tr.ContentEvents)
	}
}
