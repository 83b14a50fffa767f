package observe

import (
	"bytes"
	"net/http"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/inferload/inferload/record"
)

// BenchmarkSpanOf is the span-to-phase mapping of one vLLM llm_request span.
func BenchmarkSpanOf(b *testing.B) {
	sp := vllmSpan(7)
	b.ReportAllocs()
	for b.Loop() {
		_ = SpanOf(sp)
	}
}

// BenchmarkOTLPReceiverHTTP is the receiver's whole cost per span: one
// OTLP/HTTP export of 512 vLLM spans (an SDK's batch) over loopback,
// decoded, mapped and handed to OnSpan. ns/op is per export; the
// ns/span metric divides it by 512.
func BenchmarkOTLPReceiverHTTP(b *testing.B) {
	const batch = 512
	r, err := ListenOTLP(OTLPConfig{Addr: "127.0.0.1:0", OnSpan: func(record.Span) {}})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	spans := exportOf()
	for range batch {
		spans.ResourceSpans[0].ScopeSpans[0].Spans = append(spans.ResourceSpans[0].ScopeSpans[0].Spans, vllmSpan(7))
	}
	body, err := proto.Marshal(spans)
	if err != nil {
		b.Fatal(err)
	}
	url := "http://" + r.Addr() + "/v1/traces"
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		resp, err := http.Post(url, "application/x-protobuf", bytes.NewReader(body))
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("%v %v", err, resp)
		}
		resp.Body.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/span")
}
