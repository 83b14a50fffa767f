package observe

import (
	"encoding/hex"
	"math"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/inferload/inferload/record"
)

// The span attributes vLLM sets on its llm_request span (vllm/tracing.py,
// SpanAttributes), durations as seconds in doubles, counts as integers.
const (
	AttrQueue            = "gen_ai.latency.time_in_queue"
	AttrTTFT             = "gen_ai.latency.time_to_first_token"
	AttrE2E              = "gen_ai.latency.e2e"
	AttrPrefill          = "gen_ai.latency.time_in_model_prefill"
	AttrDecode           = "gen_ai.latency.time_in_model_decode"
	AttrPromptTokens     = "gen_ai.usage.prompt_tokens"
	AttrCompletionTokens = "gen_ai.usage.completion_tokens"
)

// maxSpanSeconds bounds a duration attribute: the records' histograms end
// at an hour, and a server span of more than a day is not a measurement.
const maxSpanSeconds = 86400

// maxSpanCount bounds a token count attribute (no context is a billion).
const maxSpanCount = 1 << 30

// SpanOf maps one OTLP span to a record.Span: its ids in hex, its name,
// and the phases and token counts among its attributes. An attribute of
// the wrong type or with an impossible value (NaN, negative, beyond a day
// or 2^30 tokens) is left out and named in Invalid; a span without them
// is still a Span, just one without phases.
func SpanOf(sp *tracepb.Span) record.Span {
	out := record.Span{
		TraceID:      hexID(sp.GetTraceId(), 16),
		SpanID:       hexID(sp.GetSpanId(), 8),
		ParentSpanID: hexID(sp.GetParentSpanId(), 8),
		Name:         sp.GetName(),
	}
	for _, kv := range sp.GetAttributes() {
		if !applyAttr(&out, kv.GetKey(), kv.GetValue()) {
			out.Invalid = append(out.Invalid, kv.GetKey())
		}
	}
	return out
}

// applyAttr sets the field attribute key feeds; false when the key is one
// of ours and its value cannot be used. Unknown keys are ignored.
func applyAttr(s *record.Span, key string, v *commonpb.AnyValue) bool {
	var dst **int64
	switch key {
	case AttrQueue:
		dst = &s.QueueUS
	case AttrTTFT:
		dst = &s.TTFTUS
	case AttrE2E:
		dst = &s.E2EUS
	case AttrPrefill:
		dst = &s.PrefillUS
	case AttrDecode:
		dst = &s.DecodeUS
	case AttrPromptTokens:
		return countAttr(&s.PromptTokens, v)
	case AttrCompletionTokens:
		return countAttr(&s.CompletionTokens, v)
	default:
		return true
	}
	us, ok := secondsUS(v)
	if ok {
		*dst = &us
	}
	return ok
}

// secondsUS reads a duration in seconds as rounded microseconds. vLLM
// sends doubles; an integer is taken as whole seconds too, since OTLP
// SDKs send a Python int that way. Anything else is refused.
func secondsUS(v *commonpb.AnyValue) (int64, bool) {
	var s float64
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_DoubleValue:
		s = x.DoubleValue
	case *commonpb.AnyValue_IntValue:
		s = float64(x.IntValue)
	default:
		return 0, false
	}
	if math.IsNaN(s) || s < 0 || s > maxSpanSeconds {
		return 0, false
	}
	return int64(math.Round(s * 1e6)), true
}

// countAttr reads a token count: an integer from 0 to maxSpanCount.
func countAttr(dst *int, v *commonpb.AnyValue) bool {
	x, ok := v.GetValue().(*commonpb.AnyValue_IntValue)
	if !ok || x.IntValue < 0 || x.IntValue > maxSpanCount {
		return false
	}
	*dst = int(x.IntValue)
	return true
}

// hexID renders an id of n bytes in hex; an id of another length (a
// malformed span) or all zero (invalid in OTLP) is empty.
func hexID(b []byte, n int) string {
	if len(b) != n {
		return ""
	}
	for _, c := range b {
		if c != 0 {
			return hex.EncodeToString(b)
		}
	}
	return ""
}
