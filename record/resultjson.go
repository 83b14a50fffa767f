package record

import (
	"encoding/json"
	"strconv"
)

// AppendResultJSON appends r as encoding/json would encode it (same field
// order, same omitempty rules, same string escaping), without reflection:
// a record with 128 events costs about a tenth of json.Marshal. Every
// record of a run goes through here. TestAppendResultJSONMatches fails if a
// field is added to Result and not here.
func AppendResultJSON(b []byte, r *Result) []byte {
	return appendResult(b, r, false)
}

// AppendCompactResultJSON is AppendResultJSON with the event offsets
// packed under "events_b64" (appendEventsPacked) in place of "events_us":
// the form compressed record files hold, since gaps of a few thousand
// microseconds compress to near their jitter's entropy there, where
// absolute offsets never repeat. Result's UnmarshalJSON reads every form
// back to the same absolute EventsUS.
func AppendCompactResultJSON(b []byte, r *Result) []byte {
	return appendResult(b, r, true)
}

func appendResult(b []byte, r *Result, compact bool) []byte {
	b = strconv.AppendUint(append(b, `{"id":`...), r.ID, 10)
	b = appendIntOmit(b, `,"step":`, int64(r.Step))
	b = appendStrOmit(b, `,"class":`, r.Class)
	b = appendIntOmit(b, `,"turn":`, int64(r.Turn))
	if r.Session != 0 {
		b = strconv.AppendUint(append(b, `,"session":`...), r.Session, 10)
	}
	b = appendIntOmit(b, `,"session_calls":`, int64(r.SessionCalls))
	b = appendBoolOmit(b, `,"reply_cut":true`, r.ReplyCut)
	b = appendStrOmit(b, `,"expect":`, r.Expect)
	b = appendBoolOmit(b, `,"graded":true`, r.Graded)
	b = appendBoolOmit(b, `,"correct":true`, r.Correct)
	b = appendBoolOmit(b, `,"unparsable":true`, r.Unparsable)
	b = appendBoolOmit(b, `,"warmup":true`, r.Warmup)
	b = appendBoolOmit(b, `,"open_loop":true`, r.OpenLoop)
	b = appendIntOmit(b, `,"intended_us":`, r.IntendedUS)
	b = appendInt(b, `,"send_us":`, r.SendUS)
	b = appendIntOmit(b, `,"queue_delay_us":`, r.QueueDelayUS)
	b = appendBoolOmit(b, `,"late":true`, r.Late)
	b = appendIntOmit(b, `,"ttft_us":`, r.TTFTUS)
	b = appendStrOmit(b, `,"clock":`, r.Clock)
	b = appendIntOmit(b, `,"read_lag_us":`, r.ReadLagUS)
	b = appendIntOmit(b, `,"ttfr_us":`, r.TTFRUS)
	b = appendIntOmit(b, `,"ttfo_us":`, r.TTFOUS)
	b = appendInt(b, `,"e2e_us":`, r.E2EUS)
	if compact {
		b = appendEventsPacked(b, r.EventsUS)
	} else {
		b = appendEvents(b, r.EventsUS)
	}
	b = appendTail(b, r.EventsTail)
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, r.Stream)
	b = appendInt(b, `,"input_tokens":`, int64(r.InputTokens))
	b = appendInt(b, `,"output_tokens":`, int64(r.OutputTokens))
	b = appendIntOmit(b, `,"reasoning_tokens":`, int64(r.ReasoningTokens))
	b = appendIntOmit(b, `,"reasoning_events":`, int64(r.ReasoningEvents))
	b = appendBoolOmit(b, `,"channels_interleaved":true`, r.ChannelsInterleaved)
	b = appendStrOmit(b, `,"token_source":`, string(r.TokenSource))
	b = appendBoolOmit(b, `,"usage_implausible":true`, r.UsageImplausible)
	b = appendIntOmit(b, `,"usage_output_tokens":`, int64(r.UsageOutputTokens))
	b = appendIntOmit(b, `,"usage_input_tokens":`, int64(r.UsageInputTokens))
	b = appendIntOmit(b, `,"prompt_tokens_sent":`, int64(r.PromptTokensSent))
	b = appendIntOmit(b, `,"max_tokens":`, int64(r.MaxTokens))
	b = appendBoolOmit(b, `,"ignore_eos":true`, r.IgnoreEOS)
	b = appendStrOmit(b, `,"finish_reason":`, r.FinishReason)
	b = appendStrOmit(b, `,"response_id":`, r.ResponseID)
	b = appendIntOmit(b, `,"status":`, int64(r.Status))
	b = appendStrOmit(b, `,"error":`, string(r.Error))
	b = appendStrOmit(b, `,"error_msg":`, r.ErrorMsg)
	b = appendIntOmit(b, `,"bytes_out":`, r.BytesOut)
	b = appendIntOmit(b, `,"bytes_in":`, r.BytesIn)
	b = appendStrOmit(b, `,"proto":`, r.Proto)
	b = appendBoolOmit(b, `,"new_conn":true`, r.NewConn)
	b = appendIntOmit(b, `,"replica":`, int64(r.Replica))
	b = appendIntOmit(b, `,"images":`, int64(r.Images))
	b = appendStrOmit(b, `,"image_size":`, r.ImageSize)
	b = appendAttempts(b, r.Attempts)
	b = appendStrOmit(b, `,"retry_stop":`, r.RetryStop)
	b = appendStrOmit(b, `,"trace_id":`, r.TraceID)
	b = appendIntOmit(b, `,"cached_tokens":`, int64(r.CachedTokens))
	b = appendIntOmit(b, `,"reuse_tokens":`, int64(r.ReuseTokens))
	b = appendServer(b, r.Server)
	b = appendChain(b, r.Chain)
	return append(b, '}')
}

// appendTail encodes a capped stream's tail (rare, so kept simple).
func appendTail(b []byte, t *EventsTail) []byte {
	if t == nil {
		return b
	}
	b = appendInt(b, `,"events_tail":{"dropped":`, int64(t.Dropped))
	b = appendInt(b, `,"last_us":`, t.LastUS)
	if t.Gaps == nil {
		return append(b, `,"gaps":null}`...)
	}
	b = append(b, `,"gaps":[`...)
	for i, g := range t.Gaps {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(b, '['), g[0], 10)
		b = append(strconv.AppendInt(append(b, ','), g[1], 10), ']')
	}
	return append(b, "]}"...)
}

// appendAttempts encodes a retried request's earlier attempts (rare, so
// kept simple).
func appendAttempts(b []byte, as []Attempt) []byte {
	if len(as) == 0 {
		return b
	}
	b = append(b, `,"attempts":[`...)
	for i := range as {
		a := &as[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = appendInt(append(b, '{'), `"send_us":`, a.SendUS)
		b = appendInt(b, `,"end_us":`, a.EndUS)
		b = appendIntOmit(b, `,"status":`, int64(a.Status))
		b = appendString(append(b, `,"error":`...), string(a.Error))
		b = appendIntOmit(b, `,"retry_after_us":`, a.RetryAfterUS)
		b = append(appendInt(b, `,"wait_us":`, a.WaitUS), '}')
	}
	return append(b, ']')
}

// appendServer encodes a record's server-side timings.
func appendServer(b []byte, s *ServerTime) []byte {
	if s == nil {
		return b
	}
	b = appendInt(b, `,"server":{"prefill_us":`, s.PrefillUS)
	b = appendIntOmit(b, `,"prompt_n":`, int64(s.PromptN))
	b = appendInt(b, `,"decode_us":`, s.DecodeUS)
	b = appendIntOmit(b, `,"decode_n":`, int64(s.DecodeN))
	b = appendIntOmit(b, `,"queue_us":`, s.QueueUS)
	b = appendBoolOmit(b, `,"has_queue":true`, s.HasQueue)
	b = appendIntOmit(b, `,"inference_us":`, s.InferenceUS)
	return append(b, '}')
}

// appendChain encodes a chain request's steps.
func appendChain(b []byte, steps []ChainStep) []byte {
	if len(steps) == 0 {
		return b
	}
	b = append(b, `,"chain":[`...)
	for i := range steps {
		s := &steps[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(append(b, `{"name":`...), s.Name)
		b = appendString(append(b, `,"kind":`...), s.Kind)
		b = appendInt(b, `,"send_us":`, s.SendUS)
		b = appendIntOmit(b, `,"ttft_us":`, s.TTFTUS)
		b = appendInt(b, `,"dur_us":`, s.DurUS)
		b = appendIntOmit(b, `,"status":`, int64(s.Status))
		b = appendStrOmit(b, `,"error":`, string(s.Error))
		b = appendIntOmit(b, `,"input_tokens":`, int64(s.InputTokens))
		b = appendIntOmit(b, `,"output_tokens":`, int64(s.OutputTokens))
		b = appendIntOmit(b, `,"bytes_in":`, s.BytesIn)
		b = appendBoolOmit(b, `,"skipped":true`, s.Skipped)
		b = append(appendBoolOmit(b, `,"reply_cut":true`, s.ReplyCut), '}')
	}
	return append(b, ']')
}

func appendInt(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(append(b, key...), v, 10)
}

func appendIntOmit(b []byte, key string, v int64) []byte {
	if v == 0 {
		return b
	}
	return appendInt(b, key, v)
}

func appendBoolOmit(b []byte, keyAndTrue string, v bool) []byte {
	if !v {
		return b
	}
	return append(b, keyAndTrue...)
}

func appendStrOmit(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, key...), s)
}

func appendEvents(b []byte, events []int64) []byte {
	if len(events) == 0 {
		return b
	}
	b = append(b, `,"events_us":[`...)
	for i, v := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return append(b, ']')
}

// appendString quotes s. Plain printable ASCII, the usual case, is copied
// as is; anything encoding/json would escape goes through it, so the bytes
// always match.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
