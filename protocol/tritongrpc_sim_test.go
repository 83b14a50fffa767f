package protocol_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// grpcRequest renders a triton-grpc request for model.
func grpcRequest(t *testing.T, model string, maxTokens int, stream bool) *protocol.Request {
	t.Helper()
	body, err := protocol.OpenAIBody{Model: model, Prompt: "tell me a story", MaxTokens: maxTokens, Stream: stream}.Render(protocol.APITritonGRPC)
	if err != nil {
		t.Fatal(err)
	}
	return &protocol.Request{API: protocol.APITritonGRPC, Body: body, Stream: stream, MaxTokens: maxTokens, EventsCap: maxTokens}
}

// The triton-grpc client against the simulator's gRPC service on its one
// port: streamed, one content event a token stamped between Sent and End
// and the final response seen; whole, one event at the reply. Both share
// one HTTP/2 connection, opened by the first request.
func TestTritonGRPCAgainstSim(t *testing.T) {
	t.Parallel()
	root, model := startSim(t)
	c := simClient(t, protocol.OpenAIOptions{BaseURL: root, Model: model})
	const n = 9
	for k, tt := range []struct {
		stream  bool
		events  int
		sawDone bool
	}{{true, n, true}, {false, 1, false}} {
		got := do(t, c, grpcRequest(t, model, n, tt.stream))
		if got.Err != record.ErrNone {
			t.Fatalf("stream=%v: %s %q", tt.stream, got.Err, got.ErrMsg)
		}
		if got.ContentEvents != tt.events || len(got.EventsUS) != tt.events || got.SawDone != tt.sawDone {
			t.Errorf("stream=%v: %d content events (%d kept), saw done %v: want %d, %v",
				tt.stream, got.ContentEvents, len(got.EventsUS), got.SawDone, tt.events, tt.sawDone)
		}
		if got.Sent.IsZero() || got.FirstToken.Before(got.Sent) || got.End.Before(got.FirstToken) {
			t.Errorf("stream=%v: sent %v, first token %v, end %v: want them in order", tt.stream, got.Sent, got.FirstToken, got.End)
		}
		if got.Status != 200 || got.Proto != "HTTP/2.0" || got.NewConn != (k == 0) || got.Clock != protocol.ClockUser ||
			got.BytesOut == 0 || got.BytesIn == 0 {
			t.Errorf("stream=%v: status %d, proto %q, new conn %v, clock %q, bytes %d out %d in", tt.stream,
				got.Status, got.Proto, got.NewConn, got.Clock, got.BytesOut, got.BytesIn)
		}
	}
	// Close ends the connection; the client stays usable, on a new one.
	c.Close()
	if got := do(t, c, grpcRequest(t, model, 2, true)); got.Err != record.ErrNone || !got.NewConn {
		t.Errorf("after Close: %s %q, new connection %v: want a success on a new one", got.Err, got.ErrMsg, got.NewConn)
	}
	// An unknown model is the server's NotFound, a rejection like HTTP's 4xx.
	got := do(t, c, grpcRequest(t, "bert", 4, true))
	if got.Err != record.ErrHTTP4xx || !strings.Contains(got.ErrMsg, "gRPC NotFound: Request for unknown model: 'bert'") {
		t.Errorf("unknown model: %s %q", got.Err, got.ErrMsg)
	}
}

// Every fault the simulator injects, on both RPCs, classified as the
// HTTP clients classify it, except what gRPC cannot show: the stream's
// missing final response is a clean end, as for Triton's HTTP generate
// stream.
func TestTritonGRPCFaultsAgainstSim(t *testing.T) {
	t.Parallel()
	tests := []struct {
		faults   string
		stream   bool
		timeouts *protocol.Timeouts
		want     record.ErrorKind
		msg      string
	}{
		{"status503=1", true, nil, record.ErrHTTP5xx, "gRPC Unavailable: simulated fault: HTTP 503"},
		{"status503=1", false, nil, record.ErrHTTP5xx, "gRPC Unavailable"},
		{"status429=1", true, nil, record.ErrHTTP429, "gRPC ResourceExhausted"},
		{"status400=1", false, nil, record.ErrHTTP4xx, "gRPC InvalidArgument"},
		{"reset=1", true, nil, record.ErrConnReset, "RST_STREAM"},
		{"reset=1", false, nil, record.ErrConnReset, "RST_STREAM"},
		{"malformed=1", true, nil, record.ErrMalformedEvent, "raw BYTES tensor"},
		{"malformed=1", false, nil, record.ErrMalformedEvent, "raw BYTES tensor"},
		{"missing_done=1", true, nil, record.ErrNone, ""},
		{"error_event=1", true, nil, record.ErrStreamErrorEvent, "error_message: simulated fault"},
		{"error_event=1", false, nil, record.ErrHTTP5xx, "gRPC Internal: simulated fault"},
		{"stall=1:3s", true, &protocol.Timeouts{Total: 400 * time.Millisecond}, record.ErrTimeoutAfterTTFT, "total timeout"},
		// A whole reply held back: nothing came before the deadline.
		{"stall=1:3s", false, &protocol.Timeouts{Total: 400 * time.Millisecond}, record.ErrTimeoutBeforeTTFT, "total timeout"},
		{"slow_first_byte=1:3s", true, &protocol.Timeouts{TTFT: 300 * time.Millisecond}, record.ErrTimeoutBeforeTTFT, "TTFT timeout"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/stream=%v", tt.faults, tt.stream), func(t *testing.T) {
			t.Parallel()
			f, err := sim.ParseFaults(tt.faults)
			if err != nil {
				t.Fatal(err)
			}
			srv, v1 := startProfile(t, tinyFixed(t), f)
			c := simClient(t, protocol.OpenAIOptions{BaseURL: strings.TrimSuffix(v1, "/v1")})
			req := grpcRequest(t, srv.Profile().Model, 16, tt.stream)
			req.Timeouts = tt.timeouts
			got := do(t, c, req)
			if got.Err != tt.want || !strings.Contains(got.ErrMsg, tt.msg) {
				t.Errorf("%s %q, want %s %q", got.Err, got.ErrMsg, tt.want, tt.msg)
			}
		})
	}
}
