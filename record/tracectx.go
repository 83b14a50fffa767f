package record

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// TraceID is the W3C trace id of request id of the run named run: the first
// 16 bytes of SHA-256(run, id), so the same run and record id always give
// the same trace id and a rebuild can recompute the join key of every
// record. The client sends it in a traceparent header and, as 32 hex
// digits, as x-request-id; servers that log either can be joined to the
// record.
func TraceID(run string, id uint64) [16]byte {
	h := sha256.New()
	h.Write([]byte(run))
	var b [9]byte
	binary.BigEndian.PutUint64(b[1:], id)
	h.Write(b[:])
	var out [16]byte
	copy(out[:], h.Sum(nil))
	if out == ([16]byte{}) {
		out[15] = 1 // the all-zero id is invalid in W3C trace context
	}
	return out
}

// ProbeTraceID is the trace id of every pre-flight probe: the probe is
// sent before the run directory (whose name the records' trace ids derive
// from) exists, and a fixed id lets a span of the probe be told from a
// stray one (SpansSummary.Probe).
var ProbeTraceID = TraceID("inferload pre-flight probe", 0)

// SpanID is the span id of a request's attempt-th try (0-based) under
// trace: one span per attempt, derived so it can be recomputed too.
func SpanID(trace [16]byte, attempt int) [8]byte {
	var b [24]byte
	copy(b[:], trace[:])
	binary.BigEndian.PutUint64(b[16:], uint64(attempt))
	sum := sha256.Sum256(b[:])
	var out [8]byte
	copy(out[:], sum[:8])
	if out == ([8]byte{}) {
		out[7] = 1
	}
	return out
}

// TraceParent renders the W3C traceparent header of one attempt: version
// 00, the trace and span id, flags 01 (sampled, so a tracing server keeps
// the span).
func TraceParent(trace [16]byte, attempt int) string {
	span := SpanID(trace, attempt)
	var b [55]byte
	copy(b[:], "00-")
	hex.Encode(b[3:35], trace[:])
	b[35] = '-'
	hex.Encode(b[36:52], span[:])
	copy(b[52:], "-01")
	return string(b[:])
}
