package protocol

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/inferload/inferload/record"
)

// APIRealtime is OpenAI's Realtime API over a WebSocket, GET
// {base}/realtime (base .../v1, ws:// or wss:// on the wire): one session
// a request, in which the client creates a user message and asks for a
// response, and the server answers with typed events — text, audio or
// its transcript in deltas — ending with response.done.
const APIRealtime API = "realtime"

// maxRealtimeEvent bounds one server event, as an SSE event is bounded: a
// bigger one fails the request as malformed_event.
const maxRealtimeEvent = 256 << 10

// renderRealtime builds a realtime request's client events, one JSON
// object a line: conversation.item.create with the prompt as the user's
// input_text, then response.create asking for text (GA's
// output_modalities) and max_output_tokens; Extra fields go into the
// response object (output_modalities: [audio], instructions, voice, ...).
func (b OpenAIBody) renderRealtime() ([]byte, error) {
	item := map[string]any{"type": "conversation.item.create", "item": map[string]any{
		"type": "message", "role": "user",
		"content": []map[string]string{{"type": "input_text", "text": b.flatPrompt()}},
	}}
	resp := map[string]any{"output_modalities": []string{"text"}}
	if b.sendMaxTokens() {
		resp["max_output_tokens"] = b.MaxTokens
	}
	for k, v := range b.Extra {
		resp[k] = v
	}
	first, err := encodeBody(item)
	if err != nil {
		return nil, err
	}
	second, err := encodeBody(map[string]any{"type": "response.create", "response": resp})
	if err != nil {
		return nil, err
	}
	return append(append(first, '\n'), second...), nil
}

// realtimeURL is the session's WebSocket URL: the endpoint with ws or
// wss for http or https, and the model as OpenAI takes it (?model=).
func realtimeURL(u string, model string) string {
	switch {
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + strings.TrimPrefix(u, "https://")
	case strings.HasPrefix(u, "http://"):
		u = "ws://" + strings.TrimPrefix(u, "http://")
	}
	if model != "" {
		u += "?model=" + model
	}
	return u
}

// runRealtime holds one realtime session: it dials, sends the request's
// client events, and reads server events into the trace until
// response.done, with the call's timeouts and classification. Send is
// when the connection is open (the handshake, like a TCP connect, is not
// the server's answer time); arrivals are on the user-space clock.
func (cl *call) runRealtime(u string, hdr http.Header) {
	cl.reserveEvents()
	conn, resp, err := websocket.Dial(cl.ctx, realtimeURL(u, cl.c.model), &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: cl.c.tr}, HTTPHeader: realtimeHeader(hdr, cl.c.host),
	})
	if resp != nil {
		cl.t.Status, cl.t.Proto = resp.StatusCode, resp.Proto
	}
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols && cl.ctx.Err() == nil {
			err = cl.httpError(resp)
		}
		cl.fail(err)
		return
	}
	defer conn.CloseNow()
	conn.SetReadLimit(maxRealtimeEvent)
	cl.t.Sent, cl.t.NewConn = time.Now(), true
	cl.gotConn()
	if err := cl.realtimeSession(conn); err != nil {
		cl.fail(cl.realtimeFailure(err))
		return
	}
	_ = conn.Close(websocket.StatusNormalClosure, "")
}

// realtimeHeader is the handshake's headers: the shared set's
// authorization and target.headers, without the body's Content-Type and
// Accept, which a GET upgrade has no use for.
func realtimeHeader(shared http.Header, host string) http.Header {
	h := shared.Clone()
	h.Del("Content-Type")
	h.Del("Accept")
	h.Del("X-Idempotency-Key")
	if host != "" {
		h.Set("Host", host)
	}
	return h
}

// realtimeSession sends the client events and reads the server's.
func (cl *call) realtimeSession(conn *websocket.Conn) error {
	for line := range bytes.SplitSeq(cl.req.Body, []byte("\n")) {
		if err := conn.Write(cl.ctx, websocket.MessageText, line); err != nil {
			return err
		}
		cl.t.BytesOut += int64(len(line))
	}
	// The reads take no context: the library arms a timer per frame for
	// one, a few allocations an event. The call's end closes the
	// connection instead, which ends a read at once; classify then finds
	// the timeout or the cancel in the call's context.
	stop := context.AfterFunc(cl.ctx, func() { _ = conn.CloseNow() })
	defer stop()
	var e RealtimeEvent
	var buf bytes.Buffer // one event at a time, reused: no allocation per event
	for {
		data, err := readMessage(context.Background(), conn, &buf)
		a := arrival{at: time.Now()}
		if err != nil {
			return err
		}
		cl.t.BytesIn += int64(len(data))
		if err := ScanRealtime(data, &e); err != nil {
			return cl.malformed(err)
		}
		end, err := cl.realtimeEvent(&e, data, a)
		if err != nil {
			return err
		}
		if end {
			cl.t.SawDone = true
			cl.clock.end(cl.t, a)
			return emptyOutput(cl.t)
		}
	}
}

// readMessage reads the next message into buf, reset first, and returns
// its bytes (valid until the next read). conn.Read would allocate each
// message afresh.
func readMessage(ctx context.Context, conn *websocket.Conn, buf *bytes.Buffer) ([]byte, error) {
	_, r, err := conn.Reader(ctx)
	if err != nil {
		return nil, err
	}
	buf.Reset()
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// realtimeFailure classifies what ended a session early: a closed
// connection before response.done is an incomplete stream, an event over
// the size limit a malformed one; timeouts and the rest as for HTTP.
func (cl *call) realtimeFailure(err error) error {
	var f *failure
	switch {
	case errors.As(err, &f), cl.ctx.Err() != nil:
		return err
	case errors.Is(err, websocket.ErrMessageTooBig):
		return &failure{record.ErrMalformedEvent, fmt.Sprintf("event after %d content events over %d bytes", cl.t.ContentEvents, maxRealtimeEvent)}
	case websocket.CloseStatus(err) != -1:
		return &failure{record.ErrStreamIncomplete, fmt.Sprintf("session closed (%v) without response.done after %d content events",
			websocket.CloseStatus(err), cl.t.ContentEvents)}
	}
	return err
}

// realtimeEvent folds one server event into the trace and reports
// whether it ended the response.
func (cl *call) realtimeEvent(e *RealtimeEvent, data []byte, a arrival) (bool, error) {
	switch string(e.Type) {
	case "response.output_text.delta", "response.text.delta",
		"response.output_audio.delta", "response.audio.delta",
		"response.output_audio_transcript.delta", "response.audio_transcript.delta":
		if e.Delta {
			return false, cl.token(a, false)
		}
	case "response.done":
		return true, cl.realtimeDone(&e.Response, data)
	case "error":
		return false, realtimeError(e)
	}
	return false, nil
}

// realtimeDone takes response.done's usage and status: completed is a
// stop, incomplete for max_output_tokens a length; failed is the
// server's failure, cancelled a failure too (nothing asked to cancel).
func (cl *call) realtimeDone(f *ResponseFields, data []byte) error {
	t := cl.t
	if f.Usage {
		t.UsageReported = true
		t.PromptTokens, t.CompletionTokens, t.CachedTokens = f.Input, f.Output, f.Cached
	}
	switch string(f.Status) {
	case "completed":
		t.FinishReason = "stop"
	case "incomplete":
		t.FinishReason = "length"
		if string(f.Incomplete) == "content_filter" {
			t.FinishReason = "content_filter"
		}
	case "failed", "cancelled":
		return &failure{record.ErrStreamErrorEvent, "response.done with status " + string(f.Status) + ": " + errorText(data)}
	}
	return nil
}

// realtimeError classifies an error event by its error's type and code:
// a rate limit is a 429 by another name, an invalid request a rejected
// one, anything else the server's failure mid-session.
func realtimeError(e *RealtimeEvent) error {
	typ, code := decodeJSONString(e.ErrorType), decodeJSONString(e.ErrorCode)
	kind := record.ErrStreamErrorEvent
	switch {
	case strings.Contains(code, "rate_limit") || strings.Contains(typ, "rate_limit"):
		kind = record.ErrHTTP429
	case typ == "invalid_request_error" || strings.HasPrefix(code, "invalid"):
		kind = record.ErrHTTP4xx
	}
	msg := "error event: " + decodeJSONString(e.ErrorMessage)
	if typ != "" || code != "" {
		msg += " (" + strings.Trim(typ+" "+code, " ") + ")"
	}
	return &failure{kind, msg}
}

// RealtimeEvent is what one Realtime API server event says: its type,
// whether its delta carries output, response.done's response, an error
// event's error. Byte slices alias the scanned data.
type RealtimeEvent struct {
	// Type is the event's type, raw ("response.output_text.delta").
	Type []byte
	// Delta is true for a non-empty "delta" string (text, or base64 audio).
	Delta bool
	// Response is response.done's response: status, the reason of its
	// status_details (in Incomplete), usage.
	Response ResponseFields
	// ErrorType, ErrorCode and ErrorMessage are an error event's.
	ErrorType, ErrorCode, ErrorMessage []byte
}

// ScanRealtime reads data, one JSON object, into e without allocating,
// with ScanChunk's guarantees.
func ScanRealtime(data []byte, e *RealtimeEvent) error {
	*e = RealtimeEvent{}
	s := scanner{b: data}
	if err := s.start(); err != nil {
		return err
	}
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		var text []byte
		switch string(k) {
		case "type":
			e.Type, err = s.stringOrSkip()
		case "delta":
			text, err = s.stringOrSkip()
			e.Delta = len(text) > 0
		case "response":
			e.Response = ResponseFields{}
			err = s.realtimeResponse(&e.Response)
		case "error":
			e.ErrorType, e.ErrorCode, e.ErrorMessage = nil, nil, nil
			err = s.realtimeError(e)
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	if err != nil {
		return err
	}
	return s.end()
}

// realtimeResponse reads a response object's status, status_details'
// reason and usage.
func (s *scanner) realtimeResponse(f *ResponseFields) error {
	if s.peek() != '{' {
		return s.skip()
	}
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "status":
			f.Status, err = s.stringOrSkip()
		case "status_details":
			f.Incomplete, err = s.stringMember("reason")
		case "usage":
			err = s.responsesUsage(f)
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return err
}

// realtimeError reads an error event's error object.
func (s *scanner) realtimeError(e *RealtimeEvent) error {
	if s.peek() != '{' {
		return s.skip()
	}
	return s.errorObject(&e.ErrorType, &e.ErrorCode, &e.ErrorMessage)
}

// errorObject reads the members of an error object the scanner is at
// (an opening brace): its type, code and message strings, raw; code may
// be nil for an API whose errors carry none (it is skipped then).
func (s *scanner) errorObject(typ, code, msg *[]byte) error {
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch {
		case string(k) == "type":
			*typ, err = s.stringOrSkip()
		case string(k) == "code" && code != nil:
			*code, err = s.stringOrSkip()
		case string(k) == "message":
			*msg, err = s.stringOrSkip()
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return err
}
