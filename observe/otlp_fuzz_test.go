package observe

import (
	"encoding/hex"
	"testing"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// FuzzSpanOf feeds arbitrary export bodies through the decode and the
// span-to-phase mapping the receiver applies: nothing may panic, every id
// is empty or full-length hex, and every phase kept is a duration within
// the bounds SpanOf promises.
func FuzzSpanOf(f *testing.F) {
	seed, _ := proto.Marshal(exportOf(vllmSpan(7)))
	f.Add(seed)
	f.Fuzz(func(t *testing.T, body []byte) {
		var req collectorpb.ExportTraceServiceRequest
		if proto.Unmarshal(body, &req) != nil {
			return
		}
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, sp := range ss.GetSpans() {
					s := SpanOf(sp)
					for id, n := range map[string]int{s.TraceID: 32, s.SpanID: 16, s.ParentSpanID: 16} {
						if _, err := hex.DecodeString(id); err != nil || (id != "" && len(id) != n) {
							t.Fatalf("id %q", id)
						}
					}
					for _, p := range []*int64{s.QueueUS, s.PrefillUS, s.DecodeUS, s.TTFTUS, s.E2EUS} {
						if p != nil && (*p < 0 || *p > maxSpanSeconds*1e6) {
							t.Fatalf("phase %d µs out of bounds", *p)
						}
					}
					if s.PromptTokens < 0 || s.CompletionTokens < 0 {
						t.Fatalf("negative count %+v", s)
					}
				}
			}
		}
	})
}
