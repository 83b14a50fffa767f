package record

import (
	"bytes"
	"unicode/utf8"
)

// decodeResult reads a record line as AppendResultJSON and
// AppendCompactResultJSON write it, without reflection: a run's end reads
// every record back (the summary and the report come from the records
// file), and encoding/json spent about 30 µs on a 200-token record, most of
// it on the event offsets. It handles the form our writer produces (known
// keys spelled exactly, each once; plain integers, booleans, strings without
// escapes; the event offsets and the server timings) and reports false for
// anything else: an escape, null, a nested value it does not read (a
// capped stream's tail, retries, chain steps), an unknown or repeated key,
// a number that is not a plain integer. The caller then decodes the line
// with encoding/json, so a line reads the same either way
// (FuzzDecodeResult). r must be zero on entry and is left partly filled on
// false.
func decodeResult(b []byte, r *Result) bool {
	d := lineDecoder{b: b}
	d.ws()
	if !d.byte('{') {
		return false
	}
	var seen uint64
	var deltas bool
	for first := true; ; first = false {
		d.ws()
		if d.byte('}') {
			break
		}
		if !first && (!d.byte(',') || !d.ws()) {
			return false
		}
		k, ok := d.key()
		if !ok {
			return false
		}
		bit, ok := resultKeys[string(k)]
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if !d.resultField(string(k), r, &deltas) {
			return false
		}
	}
	d.ws()
	if forms := seen & eventFormKeys; d.i != len(d.b) || forms&(forms-1) != 0 {
		return false // trailing bytes, or two forms of offsets: encoding/json's error
	}
	if deltas {
		if len(r.EventsUS) == 0 {
			r.EventsUS = nil // "events_dus":[] leaves EventsUS unset, as encoding/json does
		}
		r.EventsUS = undoEventDeltas(r.EventsUS)
	}
	return true
}

// resultKeys are the keys decodeResult reads, each with its bit for
// spotting repeats.
var resultKeys = func() map[string]uint64 {
	keys := []string{"id", "step", "class", "turn", "session", "session_calls", "reply_cut", "expect", "graded", "correct", "unparsable", "warmup", "open_loop", "intended_us", "send_us",
		"queue_delay_us", "late", "ttft_us", "clock", "read_lag_us", "ttfr_us", "ttfo_us", "e2e_us", "events_us", "events_dus", "events_b64",
		"stream", "input_tokens", "output_tokens", "reasoning_tokens", "reasoning_events", "channels_interleaved", "token_source", "usage_implausible",
		"usage_output_tokens", "usage_input_tokens", "prompt_tokens_sent", "max_tokens", "ignore_eos", "finish_reason", "response_id", "status",
		"error", "error_msg", "bytes_out", "bytes_in", "proto", "new_conn", "replica", "images", "image_size",
		"retry_stop", "trace_id", "cached_tokens", "reuse_tokens", "server"}
	m := make(map[string]uint64, len(keys))
	for i, k := range keys {
		m[k] = 1 << i
	}
	return m
}()

// eventFormKeys are the bits of the event offsets' three forms; a line
// holds at most one.
var eventFormKeys = resultKeys["events_us"] | resultKeys["events_dus"] | resultKeys["events_b64"]

// resultField reads the value of key k into r.
func (d *lineDecoder) resultField(k string, r *Result, deltas *bool) bool {
	ok := true
	switch k {
	case "id":
		var v int64
		v, ok = d.int()
		ok = ok && v >= 0
		r.ID = uint64(v)
	case "step":
		r.Step, ok = d.intField()
	case "class":
		r.Class, ok = d.str()
	case "turn":
		r.Turn, ok = d.intField()
	case "session":
		var v int64
		v, ok = d.int()
		ok = ok && v >= 0
		r.Session = uint64(v)
	case "session_calls":
		r.SessionCalls, ok = d.intField()
	case "reply_cut":
		r.ReplyCut, ok = d.bool()
	case "expect":
		r.Expect, ok = d.str()
	case "graded":
		r.Graded, ok = d.bool()
	case "correct":
		r.Correct, ok = d.bool()
	case "unparsable":
		r.Unparsable, ok = d.bool()
	case "warmup":
		r.Warmup, ok = d.bool()
	case "open_loop":
		r.OpenLoop, ok = d.bool()
	case "intended_us":
		r.IntendedUS, ok = d.int()
	case "send_us":
		r.SendUS, ok = d.int()
	case "queue_delay_us":
		r.QueueDelayUS, ok = d.int()
	case "late":
		r.Late, ok = d.bool()
	case "ttft_us":
		r.TTFTUS, ok = d.int()
	case "clock":
		r.Clock, ok = d.str()
	case "read_lag_us":
		r.ReadLagUS, ok = d.int()
	case "ttfr_us":
		r.TTFRUS, ok = d.int()
	case "ttfo_us":
		r.TTFOUS, ok = d.int()
	case "e2e_us":
		r.E2EUS, ok = d.int()
	case "events_us", "events_dus":
		r.EventsUS, ok = d.ints()
		*deltas = k == "events_dus"
	case "events_b64":
		var packed []byte
		if packed, ok = d.raw(); ok {
			var err error
			r.EventsUS, err = unpackEvents(packed)
			ok = err == nil // encoding/json's path reports it
		}
	case "stream":
		r.Stream, ok = d.bool()
	case "input_tokens":
		r.InputTokens, ok = d.intField()
	case "output_tokens":
		r.OutputTokens, ok = d.intField()
	case "reasoning_tokens":
		r.ReasoningTokens, ok = d.intField()
	case "reasoning_events":
		r.ReasoningEvents, ok = d.intField()
	case "channels_interleaved":
		r.ChannelsInterleaved, ok = d.bool()
	case "token_source":
		var s string
		s, ok = d.str()
		r.TokenSource = TokenSource(s)
	case "usage_implausible":
		r.UsageImplausible, ok = d.bool()
	case "usage_output_tokens":
		r.UsageOutputTokens, ok = d.intField()
	case "usage_input_tokens":
		r.UsageInputTokens, ok = d.intField()
	case "prompt_tokens_sent":
		r.PromptTokensSent, ok = d.intField()
	case "max_tokens":
		r.MaxTokens, ok = d.intField()
	case "ignore_eos":
		r.IgnoreEOS, ok = d.bool()
	case "finish_reason":
		r.FinishReason, ok = d.str()
	case "response_id":
		r.ResponseID, ok = d.str()
	case "status":
		r.Status, ok = d.intField()
	case "error":
		var s string
		s, ok = d.str()
		r.Error = ErrorKind(s)
	case "error_msg":
		r.ErrorMsg, ok = d.str()
	case "bytes_out":
		r.BytesOut, ok = d.int()
	case "bytes_in":
		r.BytesIn, ok = d.int()
	case "proto":
		r.Proto, ok = d.str()
	case "new_conn":
		r.NewConn, ok = d.bool()
	case "replica":
		r.Replica, ok = d.intField()
	case "images":
		r.Images, ok = d.intField()
	case "image_size":
		r.ImageSize, ok = d.str()
	case "retry_stop":
		r.RetryStop, ok = d.str()
	case "trace_id":
		r.TraceID, ok = d.str()
	case "cached_tokens":
		r.CachedTokens, ok = d.intField()
	case "reuse_tokens":
		r.ReuseTokens, ok = d.intField()
	case "server":
		r.Server = new(ServerTime)
		ok = d.server(r.Server)
	}
	return ok
}

// serverKeys are the keys of a record's "server" object.
var serverKeys = map[string]uint64{"prefill_us": 1, "prompt_n": 2, "decode_us": 4, "decode_n": 8,
	"queue_us": 16, "has_queue": 32, "inference_us": 64}

// server reads a record's "server" object.
func (d *lineDecoder) server(s *ServerTime) bool {
	if !d.byte('{') {
		return false
	}
	var seen uint64
	for first := true; ; first = false {
		d.ws()
		if d.byte('}') {
			return true
		}
		if !first && (!d.byte(',') || !d.ws()) {
			return false
		}
		k, ok := d.key()
		bit := serverKeys[string(k)]
		if !ok || bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
		switch string(k) {
		case "prefill_us":
			s.PrefillUS, ok = d.int()
		case "prompt_n":
			s.PromptN, ok = d.intField()
		case "decode_us":
			s.DecodeUS, ok = d.int()
		case "decode_n":
			s.DecodeN, ok = d.intField()
		case "queue_us":
			s.QueueUS, ok = d.int()
		case "has_queue":
			s.HasQueue, ok = d.bool()
		case "inference_us":
			s.InferenceUS, ok = d.int()
		}
		if !ok {
			return false
		}
	}
}

// lineDecoder walks one JSON line for decodeResult.
type lineDecoder struct {
	b []byte
	i int
}

// ws skips whitespace; it always reports true, to chain in conditions.
func (d *lineDecoder) ws() bool {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return true
		}
	}
	return true
}

// byte consumes c if it comes next.
func (d *lineDecoder) byte(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// key reads a member name and its colon, leaving d at the value.
func (d *lineDecoder) key() ([]byte, bool) {
	k, ok := d.raw()
	ok = ok && d.ws() && d.byte(':') && d.ws()
	return k, ok
}

// raw reads a string with no escapes and returns its contents. Control
// characters and invalid UTF-8 (which encoding/json rejects or replaces)
// are refused.
func (d *lineDecoder) raw() ([]byte, bool) {
	if !d.byte('"') {
		return nil, false
	}
	start := d.i
	ascii := true
	for ; d.i < len(d.b); d.i++ {
		switch c := d.b[d.i]; {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			return s, ascii || utf8.Valid(s)
		case c == '\\' || c < ' ':
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// str reads a string value.
func (d *lineDecoder) str() (string, bool) {
	s, ok := d.raw()
	return string(s), ok
}

// bool reads true or false (not null).
func (d *lineDecoder) bool() (bool, bool) {
	switch {
	case bytes.HasPrefix(d.b[d.i:], []byte("true")):
		d.i += 4
		return true, true
	case bytes.HasPrefix(d.b[d.i:], []byte("false")):
		d.i += 5
		return false, true
	}
	return false, false
}

// maxDigits keeps every integer decodeResult accepts inside int64 (and
// int, 64-bit here); longer ones go to encoding/json, which checks range.
const maxDigits = 18

// int reads a plain integer: an optional minus, then 0 or a digit string
// without a leading zero, at most maxDigits long, not followed by a
// fraction or exponent.
func (d *lineDecoder) int() (int64, bool) {
	neg := d.byte('-')
	start := d.i
	var v int64
	for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
		v = v*10 + int64(d.b[d.i]-'0')
		d.i++
	}
	n := d.i - start
	if n == 0 || n > maxDigits || (n > 1 && d.b[start] == '0') {
		return 0, false
	}
	if d.i < len(d.b) {
		if c := d.b[d.i]; c == '.' || c == 'e' || c == 'E' {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

// intField is int for a field of Go type int.
func (d *lineDecoder) intField() (int, bool) {
	v, ok := d.int()
	return int(v), ok
}

// ints reads an array of plain integers (not null: that is
// encoding/json's to read).
func (d *lineDecoder) ints() ([]int64, bool) {
	if !d.byte('[') {
		return nil, false
	}
	d.ws()
	if d.byte(']') {
		return []int64{}, true
	}
	end := bytes.IndexByte(d.b[d.i:], ']')
	if end < 0 {
		return nil, false
	}
	out := make([]int64, 0, bytes.Count(d.b[d.i:d.i+end], []byte{','})+1)
	for {
		v, ok := d.int()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		d.ws()
		if d.byte(']') {
			return out, true
		}
		if !d.byte(',') || !d.ws() {
			return nil, false
		}
	}
}
