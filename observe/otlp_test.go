package observe

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/inferload/inferload/record"
)

// exportOf wraps spans in an export request as an SDK sends it.
func exportOf(spans ...*tracepb.Span) *collectorpb.ExportTraceServiceRequest {
	return &collectorpb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}},
	}}}
}

func dbl(k string, v float64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v}}}
}

func integer(k string, v int64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
}

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// vllmSpan is an llm_request span as vLLM sends it.
func vllmSpan(trace byte) *tracepb.Span {
	return &tracepb.Span{
		TraceId: bytes.Repeat([]byte{trace}, 16), SpanId: bytes.Repeat([]byte{0xaa}, 8), ParentSpanId: bytes.Repeat([]byte{0xbb}, 8),
		Name: "llm_request", Kind: tracepb.Span_SPAN_KIND_SERVER,
		Attributes: []*commonpb.KeyValue{
			dbl(AttrQueue, 0.25), dbl(AttrTTFT, 0.3125), dbl(AttrE2E, 1.5),
			dbl(AttrPrefill, 0.0625), dbl(AttrDecode, 1.1875),
			integer(AttrPromptTokens, 512), integer(AttrCompletionTokens, 128),
			str("gen_ai.response.model", "m"),
		},
	}
}

// spanSink is a receiver on a free port that keeps what it got.
type spanSink struct {
	r     *OTLPReceiver
	mu    sync.Mutex
	spans []record.Span
}

func startCollector(t *testing.T, maxBytes int) *spanSink {
	t.Helper()
	c := &spanSink{}
	r, err := ListenOTLP(OTLPConfig{Addr: "127.0.0.1:0", MaxBytes: maxBytes, OnSpan: func(s record.Span) {
		c.mu.Lock()
		c.spans = append(c.spans, s)
		c.mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	c.r = r
	return c
}

func (c *spanSink) got() []record.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]record.Span(nil), c.spans...)
}

func postExport(t *testing.T, addr, ctype, enc string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/traces", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	if enc != "" {
		req.Header.Set("Content-Encoding", enc)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

// wantVLLM checks the mapping of vllmSpan.
func wantVLLM(t *testing.T, s record.Span) {
	t.Helper()
	if s.Name != "llm_request" || s.TraceID != strings.Repeat("07", 16) || s.ParentSpanID != strings.Repeat("bb", 8) {
		t.Fatalf("span ids/name: %+v", s)
	}
	st, ok := s.ServerTime()
	if !ok || st.QueueUS != 250_000 || !st.HasQueue || st.PrefillUS != 62_500 || st.DecodeUS != 1_187_500 || st.PromptN != 512 || st.DecodeN != 128 || !st.FromSpan {
		t.Fatalf("phases %+v ok=%v", st, ok)
	}
	if *s.TTFTUS != 312_500 || *s.E2EUS != 1_500_000 || len(s.Invalid) != 0 {
		t.Fatalf("ttft/e2e/invalid: %+v", s)
	}
}

func TestOTLPHTTPExport(t *testing.T) {
	t.Parallel()
	c := startCollector(t, 0)
	body, err := proto.Marshal(exportOf(vllmSpan(7)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, ctype, enc string }{
		{"plain protobuf", "application/x-protobuf", ""},
		{"gzip, as OTEL_EXPORTER_OTLP_COMPRESSION=gzip sends", "application/x-protobuf", "gzip"},
	} {
		b := body
		if tc.enc == "gzip" {
			b = gz(body)
		}
		resp, reply := postExport(t, c.r.Addr(), tc.ctype, tc.enc, b)
		var out collectorpb.ExportTraceServiceResponse
		if resp.StatusCode != http.StatusOK || proto.Unmarshal(reply, &out) != nil {
			t.Fatalf("%s: status %d, body %q", tc.name, resp.StatusCode, reply)
		}
	}
	got := c.got()
	if len(got) != 2 {
		t.Fatalf("got %d spans, want 2", len(got))
	}
	for _, s := range got {
		wantVLLM(t, s)
	}
	if st := c.r.Stats(); st.Exports != 2 || st.Spans != 2 || st.Rejected != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestOTLPGRPCExport(t *testing.T) {
	t.Parallel()
	c := startCollector(t, 64<<10)
	conn, err := grpc.NewClient(c.r.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := collectorpb.NewTraceServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := client.Export(ctx, exportOf(vllmSpan(7))); err != nil {
		t.Fatal(err)
	}
	// A message over the limit is refused with ResourceExhausted, and the
	// receiver goes on serving.
	big := vllmSpan(7)
	big.Name = strings.Repeat("x", 70<<10)
	_, err = client.Export(ctx, exportOf(big))
	if grpcstatus.Code(err) != codes.ResourceExhausted {
		t.Errorf("oversized gRPC export: %v, want ResourceExhausted", err)
	}
	if _, err := client.Export(ctx, exportOf(vllmSpan(7))); err != nil {
		t.Fatal(err)
	}
	got := c.got()
	if len(got) != 2 {
		t.Fatalf("got %d spans, want 2", len(got))
	}
	wantVLLM(t, got[0])
}

func TestOTLPHTTPRefusals(t *testing.T) {
	t.Parallel()
	c := startCollector(t, 1024)
	good, _ := proto.Marshal(exportOf(vllmSpan(7)))
	big := vllmSpan(7)
	big.Name = strings.Repeat("x", 2048)
	bigBody, _ := proto.Marshal(exportOf(big))
	for _, tc := range []struct {
		name        string // what the row proves
		method      string
		ctype, enc  string
		body        []byte
		code        int
		msgContains string
	}{
		{"GET is not an export", http.MethodGet, "application/x-protobuf", "", nil, http.StatusMethodNotAllowed, "takes POST"},
		{"OTLP/JSON is refused by name", http.MethodPost, "application/json", "", []byte(`{}`), http.StatusUnsupportedMediaType, "OTLP/JSON"},
		{"garbage is not a protobuf export", http.MethodPost, "application/x-protobuf", "", []byte{0xff, 0xff, 0xff}, http.StatusBadRequest, "not an ExportTraceServiceRequest"},
		{"over MaxBytes", http.MethodPost, "application/x-protobuf", "", bigBody, http.StatusRequestEntityTooLarge, "over 1024 bytes"},
		{"a gzip bomb is cut at MaxBytes after decompression", http.MethodPost, "application/x-protobuf", "gzip", gz(bigBody), http.StatusRequestEntityTooLarge, "over 1024 bytes"},
		{"a body that is not gzip", http.MethodPost, "application/x-protobuf", "gzip", good, http.StatusBadRequest, "gzip"},
		{"an unknown encoding", http.MethodPost, "application/x-protobuf", "br", good, http.StatusUnsupportedMediaType, "encoding"},
	} {
		req, _ := http.NewRequest(tc.method, "http://"+c.r.Addr()+"/v1/traces", bytes.NewReader(tc.body))
		req.Header.Set("Content-Type", tc.ctype)
		if tc.enc != "" {
			req.Header.Set("Content-Encoding", tc.enc)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var st status.Status
		if resp.StatusCode != tc.code || proto.Unmarshal(b, &st) != nil || !strings.Contains(st.GetMessage(), tc.msgContains) {
			t.Errorf("%s: status %d (%q), want %d with %q", tc.name, resp.StatusCode, st.GetMessage(), tc.code, tc.msgContains)
		}
	}
	if resp, _ := postExport(t, c.r.Addr(), "application/x-protobuf", "", good); resp.StatusCode != http.StatusOK {
		t.Errorf("after the refusals a good export got %d", resp.StatusCode)
	}
	if st := c.r.Stats(); st.Rejected != 7 || st.FirstError == "" || st.Spans != 1 {
		t.Errorf("stats %+v, want 7 rejected and 1 span", st)
	}
}

func TestSpanOf(t *testing.T) {
	t.Parallel()
	id := bytes.Repeat([]byte{1}, 16)
	for _, tc := range []struct {
		name    string // what the row proves
		attrs   []*commonpb.KeyValue
		phases  bool
		invalid []string
		queue   *int64
	}{
		{"no attributes: a span without phases", nil, false, nil, nil},
		{"prefill and decode make phases, queue optional", []*commonpb.KeyValue{dbl(AttrPrefill, 0.001), dbl(AttrDecode, 0.002)}, true, nil, nil},
		{"a zero queue is kept, not lost", []*commonpb.KeyValue{dbl(AttrQueue, 0), dbl(AttrPrefill, 0.001), dbl(AttrDecode, 0.002)}, true, nil, new(int64)},
		{"an integer duration reads as seconds", []*commonpb.KeyValue{integer(AttrPrefill, 1), dbl(AttrDecode, 0)}, true, nil, nil},
		{"a string duration is invalid", []*commonpb.KeyValue{str(AttrPrefill, "0.1"), dbl(AttrDecode, 0.002)}, false, []string{AttrPrefill}, nil},
		{"negative and NaN are invalid", []*commonpb.KeyValue{dbl(AttrPrefill, -1), dbl(AttrDecode, nan())}, false, []string{AttrPrefill, AttrDecode}, nil},
		{"beyond a day is invalid", []*commonpb.KeyValue{dbl(AttrPrefill, 86401), dbl(AttrDecode, 1)}, false, []string{AttrPrefill}, nil},
		{"a negative or double count is invalid", []*commonpb.KeyValue{integer(AttrPromptTokens, -3), dbl(AttrCompletionTokens, 2)}, false, []string{AttrPromptTokens, AttrCompletionTokens}, nil},
	} {
		s := SpanOf(&tracepb.Span{TraceId: id, SpanId: []byte{1, 2, 3}, Attributes: tc.attrs})
		_, ok := s.ServerTime()
		if ok != tc.phases || strings.Join(s.Invalid, ",") != strings.Join(tc.invalid, ",") {
			t.Errorf("%s: phases %v invalid %v", tc.name, ok, s.Invalid)
		}
		if (tc.queue == nil) != (s.QueueUS == nil) || (tc.queue != nil && *tc.queue != *s.QueueUS) {
			t.Errorf("%s: queue %v", tc.name, s.QueueUS)
		}
		if s.SpanID != "" || s.TraceID != strings.Repeat("01", 16) {
			t.Errorf("%s: a 3-byte span id must read as none: %+v", tc.name, s)
		}
	}
	if got := (&tracepb.Span{TraceId: make([]byte, 16)}); SpanOf(got).TraceID != "" {
		t.Error("the all-zero trace id is invalid in OTLP and must read as none")
	}
}

func nan() float64 { z := 0.0; return z / z }
