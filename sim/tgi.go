package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// tgiRequest is the part of a TGI /generate body the simulator honours.
type tgiRequest struct {
	Inputs     *string `json:"inputs"`
	Parameters struct {
		MaxNewTokens *int `json:"max_new_tokens"`
		Details      bool `json:"details"`
	} `json:"parameters"`
}

// parseTGI translates a /generate or /generate_stream body.
func parseTGI(stream bool) func(*http.Request, []byte) (nativeRequest, *apiError) {
	return func(_ *http.Request, body []byte) (nativeRequest, *apiError) {
		var t tgiRequest
		if err := json.Unmarshal(body, &t); err != nil {
			return nativeRequest{}, &apiError{status: http.StatusUnprocessableEntity, typ: "validation",
				msg: fmt.Sprintf("Failed to deserialize the JSON body into the target type: %v", err)}
		}
		if t.Inputs == nil {
			return nativeRequest{}, &apiError{status: http.StatusUnprocessableEntity, typ: "validation", msg: "missing field `inputs`"}
		}
		req := apiRequest{Prompt: promptJSON(*t.Inputs), MaxTokens: t.Parameters.MaxNewTokens, Stream: stream}
		return nativeRequest{req: req, api: apiCompletions, details: t.Parameters.Details}, nil
	}
}

// tgiDialect is Text Generation Inference's native replies: SSE events of
// one token each, the last one carrying generated_text and details; a
// whole reply with TGI's timing headers.
type tgiDialect struct {
	c       *call
	details bool
	buf     []byte
}

func newTGIDialect(c *call) dialect {
	return &tgiDialect{c: c, details: c.g.details, buf: make([]byte, 0, 256)}
}

func (d *tgiDialect) contentType() string { return "text/event-stream" }
func (d *tgiDialect) holdsLast() bool     { return true }
func (d *tgiDialect) start() []byte       { return nil }

// appendToken renders {"index":…,"token":{…}} without its closing brace.
func (d *tgiDialect) appendToken(b []byte, i int, text string) []byte {
	b = strconv.AppendInt(append(b, `data: {"index":`...), int64(i+1), 10)
	b = strconv.AppendUint(append(b, `,"token":{"id":`...), (d.c.words+uint64(i))%32000, 10)
	b = append(append(append(b, `,"text":"`...), text...), `","logprob":-0.25,"special":false}`...)
	return b
}

func (d *tgiDialect) token(i int, text string, broken bool) []byte {
	b := d.appendToken(d.buf[:0], i, text)
	if !broken {
		b = append(b, `,"generated_text":null,"details":null}`...)
	}
	d.buf = append(b, "\n\n"...)
	return d.buf
}

func (d *tgiDialect) errorEvent(msg string) []byte {
	b := appendJSONText(append([]byte(nil), `data: {"error":`...), msg)
	return append(b, `,"error_type":"generation"}`+"\n\n"...)
}

// end writes the last token: with generated_text and details as TGI's
// final event, or, for missing_done, as an ordinary token event.
func (d *tgiDialect) end(sent int, last string, marker bool) []byte {
	if !marker {
		return append([]byte(nil), d.token(sent-1, last, false)...)
	}
	c := d.c
	b := d.appendToken(nil, sent-1, last)
	b = appendJSONText(append(b, `,"generated_text":`...), c.fullText(sent))
	if d.details {
		b = append(b, `,"details":{"finish_reason":"`...)
		b = append(b, tgiReason(c.st.reason)...)
		b = strconv.AppendInt(append(b, `","generated_tokens":`...), int64(sent), 10)
		b = strconv.AppendInt(append(b, `,"seed":null,"input_length":`...), int64(c.g.promptTokens), 10)
		b = append(b, '}')
	} else {
		b = append(b, `,"details":null`...)
	}
	return append(b, "}\n\n"...)
}

// tgiReason names a finish reason as TGI does.
func tgiReason(r string) string {
	if r == "stop" {
		return "eos_token"
	}
	return r
}

// whole is a /generate reply: TGI's timing headers carry the engine's
// exact times, in whole milliseconds as TGI sends them.
func (d *tgiDialect) whole(h http.Header, text string, n int) []byte {
	c := d.c
	t := c.st.times
	inference := t.prefill + t.decode
	h.Set("Content-Type", "application/json")
	h.Set("X-Compute-Type", "inferload-sim")
	h.Set("X-Compute-Time", strconv.FormatFloat((t.queue+inference).Seconds(), 'f', -1, 64))
	h.Set("X-Total-Time", strconv.FormatInt((t.queue+inference).Milliseconds(), 10))
	h.Set("X-Validation-Time", "0")
	h.Set("X-Queue-Time", strconv.FormatInt(t.queue.Milliseconds(), 10))
	h.Set("X-Inference-Time", strconv.FormatInt(inference.Milliseconds(), 10))
	h.Set("X-Time-Per-Token", strconv.FormatInt(inference.Milliseconds()/int64(max(n, 1)), 10))
	h.Set("X-Prompt-Tokens", strconv.Itoa(c.g.promptTokens))
	h.Set("X-Generated-Tokens", strconv.Itoa(n))
	b := appendJSONText([]byte(`{"generated_text":`), text)
	b = append(b, `,"details":{"finish_reason":"`...)
	b = append(b, tgiReason(c.st.reason)...)
	b = strconv.AppendInt(append(b, `","generated_tokens":`...), int64(n), 10)
	return append(b, `,"seed":null,"prefill":[],"tokens":[]}}`...)
}

// errorBody is TGI's {"error", "error_type"}.
func (d *tgiDialect) errorBody(e *apiError) []byte {
	typ := "generation"
	switch {
	case e.status == http.StatusTooManyRequests || e.code == "server_overloaded":
		typ = "overloaded"
	case e.status >= 400 && e.status < 500:
		typ = "validation"
	case e.typ == "validation":
		typ = e.typ
	}
	b := appendJSONText([]byte(`{"error":`), e.msg)
	return append(append(append(b, `,"error_type":"`...), typ...), `"}`...)
}

// tgiInfo answers GET /info as TGI does, with the simulator's limits.
func (s *Server) tgiInfo(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"model_id":%s,"model_sha":null,"model_dtype":"torch.float16","model_device_type":"cuda",`+
		`"model_pipeline_tag":"text-generation","max_concurrent_requests":%d,"max_best_of":1,"max_stop_sequences":4,`+
		`"max_input_tokens":%d,"max_total_tokens":%d,"validation_workers":2,"max_client_batch_size":4,`+
		`"router":"text-generation-router","version":"%s","sha":null,"docker_label":null}`,
		s.modelJSON, max(s.prof.MaxNumSeqs, 1)*8, s.prof.MaxModelLen-1, s.prof.MaxModelLen, Version)
}
