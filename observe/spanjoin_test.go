package observe

import (
	"encoding/hex"
	"testing"

	"github.com/inferload/inferload/record"
)

func us(v int64) *int64 { return &v }

// spanFor is a span with phases for trace, its parent the client span of
// attempt (or parent when attempt is negative).
func spanFor(trace [16]byte, attempt int, prefill int64) record.Span {
	parent := ""
	if attempt >= 0 {
		id := record.SpanID(trace, attempt)
		parent = hex.EncodeToString(id[:])
	}
	return record.Span{TraceID: hex.EncodeToString(trace[:]), ParentSpanID: parent, Name: "llm_request",
		PrefillUS: us(prefill), DecodeUS: us(1000), QueueUS: us(5)}
}

func TestSpanJoin(t *testing.T) {
	t.Parallel()
	a, b, c, stray := record.TraceID("run", 1), record.TraceID("run", 2), record.TraceID("run", 3), record.TraceID("other", 1)
	j := NewSpanJoin()
	// a: a retried request; the span of its second attempt (the one the
	// record describes) must win over the first attempt's, whatever the order.
	j.AddSpan(spanFor(a, 1, 222))
	j.AddSpan(spanFor(a, 0, 111))
	// b: one span whose parent is not ours (a gateway between): taken.
	j.AddSpan(spanFor(b, -1, 333))
	// c: a span without phases (vLLM's llm_core): counted, never joined.
	j.AddSpan(record.Span{TraceID: hex.EncodeToString(c[:]), Name: "llm_core"})
	// stray: no record has it.
	j.AddSpan(spanFor(stray, 0, 1))
	recs := []*record.Result{
		{TraceID: hex.EncodeToString(a[:]), Attempts: []record.Attempt{{}}, Server: &record.ServerTime{PrefillUS: 9}},
		{TraceID: hex.EncodeToString(b[:])},
		{TraceID: hex.EncodeToString(c[:]), Server: &record.ServerTime{PrefillUS: 7}},
		{}, // trace context off: nothing to join
	}
	for _, r := range recs {
		j.Apply(r)
	}
	if s := recs[0].Server; s == nil || s.PrefillUS != 222 || !s.FromSpan || s.QueueUS != 5 || !s.HasQueue {
		t.Errorf("retried record: %+v, want the last attempt's span (prefill 222) over its in-band figures", s)
	}
	if s := recs[1].Server; s == nil || s.PrefillUS != 333 {
		t.Errorf("record with a foreign-parent span: %+v", s)
	}
	if s := recs[2].Server; s == nil || s.PrefillUS != 7 || s.FromSpan {
		t.Errorf("a span without phases must leave the in-band figures: %+v", s)
	}
	got := *j.Summary()
	want := record.SpansSummary{Received: 5, Joined: 2, Unmatched: 1, WithoutPhases: 1}
	if got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
}
