package observe

import (
	"encoding/hex"

	"github.com/inferload/inferload/record"
)

// SpanJoin joins the spans a run received to its records by trace id
// (docs/server-time.md, "OTLP spans"). A span with phases wins over the
// record's in-band timings: it is the server's fuller account (vLLM's
// carries the queue, llama.cpp's timings do not), and records.jsonl keeps
// the in-band figures as they came. Joining is a pure function of the
// spans and the records, so a rebuild joins the same way.
type SpanJoin struct {
	byTrace       map[string][]record.Span // spans with phases, in arrival order
	received      int64
	withoutPhases int64
	probe         int64
	// used marks the trace ids of records seen, so the spans left over
	// are the unmatched ones; joined counts the records given a span.
	used   map[string]bool
	joined int64
}

// probeTrace is record.ProbeTraceID in hex.
var probeTrace = hex.EncodeToString(record.ProbeTraceID[:])

// NewSpanJoin returns an empty join.
func NewSpanJoin() *SpanJoin {
	return &SpanJoin{byTrace: map[string][]record.Span{}, used: map[string]bool{}}
}

// AddSpan adds one received span, in arrival order.
func (j *SpanJoin) AddSpan(s record.Span) {
	j.received++
	if s.TraceID == probeTrace {
		j.probe++
		return
	}
	if _, ok := s.ServerTime(); !ok || s.TraceID == "" {
		j.withoutPhases++
		return
	}
	j.byTrace[s.TraceID] = append(j.byTrace[s.TraceID], s)
}

// Apply gives r the server phases of its span, when one carried its trace
// id: the span whose parent is r's last attempt (the one the record
// describes), else the last one to arrive. A chain's record spans several
// server requests and keeps no single server account. Apply must see each
// record once.
func (j *SpanJoin) Apply(r *record.Result) {
	if r.TraceID == "" {
		return
	}
	spans := j.byTrace[r.TraceID]
	j.used[r.TraceID] = true
	if len(spans) == 0 {
		return
	}
	j.joined++
	if len(r.Chain) > 0 {
		return
	}
	st, _ := pick(spans, lastAttemptSpan(r)).ServerTime()
	r.Server = st
}

// pick is the span whose parent is parent, else the last.
func pick(spans []record.Span, parent string) *record.Span {
	for i := range spans {
		if spans[i].ParentSpanID == parent {
			return &spans[i]
		}
	}
	return &spans[len(spans)-1]
}

// lastAttemptSpan is the hex span id the client sent with r's last
// attempt (record.SpanID), the parent a server's span of it names.
func lastAttemptSpan(r *record.Result) string {
	var trace [16]byte
	if n, err := hex.Decode(trace[:], []byte(r.TraceID)); err != nil || n != len(trace) {
		return ""
	}
	id := record.SpanID(trace, len(r.Attempts))
	return hex.EncodeToString(id[:])
}

// Summary is the received, joined and unmatched counts, once every
// record has been through Apply.
func (j *SpanJoin) Summary() *record.SpansSummary {
	s := &record.SpansSummary{Received: j.received, Joined: j.joined, WithoutPhases: j.withoutPhases, Probe: j.probe}
	for trace, spans := range j.byTrace {
		if !j.used[trace] {
			s.Unmatched += int64(len(spans))
		}
	}
	return s
}
