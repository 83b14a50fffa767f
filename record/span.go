package record

// Span is a server's account of one request as an OTLP trace span carried
// it (vLLM's llm_request span, sent with --otlp-traces-endpoint): one line
// of spans.jsonl. Durations are the server's own, converted from its
// seconds to microseconds; a phase the span did not carry (or carried as
// something that is not a duration) is nil, so a zero queue stays
// distinct from an unreported one.
type Span struct {
	// TraceID, SpanID and ParentSpanID are lowercase hex (32, 16, 16
	// digits). A server that continued the client's traceparent has the
	// record's trace id and the client attempt's span as its parent.
	TraceID      string `json:"trace_id"`
	SpanID       string `json:"span_id"`
	ParentSpanID string `json:"parent_span_id,omitempty"`
	Name         string `json:"name"`
	// QueueUS is gen_ai.latency.time_in_queue; PrefillUS and DecodeUS
	// gen_ai.latency.time_in_model_prefill and _decode; TTFTUS and E2EUS
	// gen_ai.latency.time_to_first_token and gen_ai.latency.e2e (from the
	// server's arrival).
	QueueUS   *int64 `json:"queue_us,omitempty"`
	PrefillUS *int64 `json:"prefill_us,omitempty"`
	DecodeUS  *int64 `json:"decode_us,omitempty"`
	TTFTUS    *int64 `json:"ttft_us,omitempty"`
	E2EUS     *int64 `json:"e2e_us,omitempty"`
	// PromptTokens and CompletionTokens are gen_ai.usage.prompt_tokens and
	// completion_tokens; 0 when absent.
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
	// Invalid names the attributes the span carried whose value could not
	// be a duration or a count (a string, NaN, a negative or absurd
	// number): kept out of the figures, listed so a reader sees why.
	Invalid []string `json:"invalid,omitempty"`
}

// ServerTime is the span's phases as a record's server account; ok is
// false when the span lacks a prefill or a decode time (a span of another
// kind, or a server that does not split them), which then cannot stand in
// for the record's own.
func (s *Span) ServerTime() (st *ServerTime, ok bool) {
	if s.PrefillUS == nil || s.DecodeUS == nil {
		return nil, false
	}
	st = &ServerTime{PrefillUS: *s.PrefillUS, DecodeUS: *s.DecodeUS,
		PromptN: s.PromptTokens, DecodeN: s.CompletionTokens, FromSpan: true}
	if s.QueueUS != nil {
		st.QueueUS, st.HasQueue = *s.QueueUS, true
	}
	return st, true
}

// SpansSummary is what the OTLP receiver got and how it joined to the
// records: summary.json's spans, present when the run listened for spans
// (observe.otlp_listen) or its directory holds spans.jsonl.
type SpansSummary struct {
	// Received counts the spans in spans.jsonl, of every name.
	Received int64 `json:"received"`
	// Joined counts the records whose trace id a span with phases carried
	// (each record once, however many spans it had).
	Joined int64 `json:"joined"`
	// Unmatched counts the spans with phases whose trace id is no
	// record's: another client's requests, an earlier run's late spans, or
	// a server that did not continue the traceparent.
	Unmatched int64 `json:"unmatched"`
	// Probe counts the spans of pre-flight probes (ProbeTraceID): expected
	// when the run probed the target first, neither joined nor unmatched.
	Probe int64 `json:"probe"`
	// WithoutPhases counts the spans that carried no prefill and decode
	// time (other span kinds, such as vLLM's llm_core journey spans).
	WithoutPhases int64 `json:"without_phases"`
}
