package protocol

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/inferload/inferload/record"
)

// The causes a call's context is canceled with, so that classify can tell
// which deadline fired.
var (
	errConnectTimeout = errors.New("connect timeout")
	errTTFTTimeout    = errors.New("TTFT timeout")
	errTotalTimeout   = errors.New("total timeout")
	errDrainTimeout   = errors.New("stream kept open after [DONE]")
)

const (
	// maxErrBody is how much of an error reply is read for its message.
	maxErrBody = 4 << 10
	// maxErrMsg keeps Trace.ErrMsg short enough for a record line.
	maxErrMsg = 240
)

// failure is a request failure already classified where it was found.
type failure struct {
	kind record.ErrorKind
	msg  string
}

func (f *failure) Error() string { return string(f.kind) + ": " + f.msg }

// classify maps what went wrong to the error taxonomy. Order matters: a
// failure found in the reply is definitive; then a fired deadline or the
// caller's cancellation explains any I/O error that followed it; only then
// is the network error itself looked at.
func (cl *call) classify(err error) (record.ErrorKind, string) {
	var f *failure
	if errors.As(err, &f) {
		return f.kind, f.msg
	}
	if cl.ctx.Err() != nil {
		if kind, msg, ok := cl.deadline(); ok {
			return kind, msg
		}
	}
	return classifyNet(err)
}

// deadline explains a done call context: which timeout fired, or whether
// the caller canceled.
func (cl *call) deadline() (record.ErrorKind, string, bool) {
	switch cause := context.Cause(cl.ctx); {
	case cause == errConnectTimeout:
		return record.ErrConnectTimeout, fmt.Sprintf("no connection within the connect timeout (%v)", cl.lim.Connect), true
	case cause == errTTFTTimeout:
		return record.ErrTimeoutBeforeTTFT, fmt.Sprintf("no content within the TTFT timeout (%v)", cl.lim.TTFT), true
	case cause == errTotalTimeout && cl.t.ContentEvents > 0:
		return record.ErrTimeoutAfterTTFT, fmt.Sprintf("total timeout (%v) after %d content events",
			cl.lim.Total, cl.t.ContentEvents), true
	case cause == errTotalTimeout:
		return record.ErrTimeoutBeforeTTFT, fmt.Sprintf("total timeout (%v) before any content", cl.lim.Total), true
	case cl.parent.Err() != nil:
		return record.ErrCanceled, canceledMsg(context.Cause(cl.parent)), true
	}
	return "", "", false
}

// canceledMsg says why a request was canceled without repeating itself
// ("canceled: canceled: context canceled"): the bare word for a plain
// cancel, else the cause once.
func canceledMsg(cause error) string {
	if cause == nil || errors.Is(cause, context.Canceled) && cause.Error() == context.Canceled.Error() {
		return "canceled"
	}
	msg := cause.Error()
	for {
		trimmed := strings.TrimPrefix(msg, "canceled: ")
		if trimmed == msg {
			break
		}
		msg = trimmed
	}
	return "canceled: " + msg
}

// unaskedEncoding fails a 2xx reply compressed although the client sent no
// Accept-Encoding: its bytes would parse as nothing ("stream ended without
// [DONE] after 0 content events"), which hides the cause (a proxy or a
// server option compressing everything).
func unaskedEncoding(resp *http.Response) error {
	ce := strings.TrimSpace(resp.Header.Get("Content-Encoding"))
	if ce == "" || strings.EqualFold(ce, "identity") {
		return nil
	}
	return &failure{record.ErrMalformedEvent, fmt.Sprintf(
		"reply has Content-Encoding %q although the client did not ask for compression (no Accept-Encoding): "+
			"a proxy or the server compresses replies; turn that off for this endpoint", ce)}
}

// redirectText describes a 3xx reply: where it points (scheme, host and
// path only: a query could carry a token) and that it is not followed.
func redirectText(resp *http.Response) string {
	loc, err := resp.Location()
	if err != nil {
		return "redirect without a usable Location: not followed"
	}
	loc.RawQuery, loc.Fragment, loc.User = "", "", nil
	return fmt.Sprintf("redirect to %s not followed (a load test measures the URL it was given: set target.url to where it points)", loc)
}

// classifyNet classifies an error of the connection or transport.
func classifyNet(err error) (record.ErrorKind, string) {
	msg := netMessage(err)
	switch {
	case isLocalResource(err):
		return record.ErrClientResource, msg + " (a limit of the machine running inferload, not of the target)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return record.ErrConnRefused, msg
	case isConnectTimeout(err):
		return record.ErrConnectTimeout, msg
	case isTLS(err):
		return record.ErrTLS, msg
	case isHTTPProtocol(msg):
		return record.ErrHTTPProtocol, msg
	case isReset(err):
		return record.ErrConnReset, msg
	}
	return record.ErrOther, msg
}

// httpProtocolErrors are the texts of net/http's errors for a reply that
// breaks HTTP itself (the errors are unexported, so only their text
// tells them apart). A body cut short is not one: that is a dropped
// connection (isReset).
var httpProtocolErrors = []string{
	// Bytes that are not an HTTP/1.x reply: another protocol on the port
	// (SSH, SMTP), garbage, a header line without a colon.
	"malformed HTTP response",
	"malformed HTTP status code",
	"malformed HTTP version",
	"malformed MIME header",
	// Response headers past maxResponseHeader, a 1xx flood counted in it.
	"server response headers exceeded",
	"too many 1xx informational responses",
	// Bad chunked transfer encoding (net/http/internal's chunked reader).
	"invalid byte in chunk length",
	"malformed chunked encoding",
	"chunked encoding contains too much non-data",
	"http chunk length too large",
	"empty hex number for chunk length",
	"chunked line ends with bare LF",
	"invalid CR in chunked line",
	"header line too long",
	// HTTP/2 (h2c by prior knowledge to a server that is not, a peer that
	// breaks framing or HPACK): the connection's protocol errors.
	"http2: failed reading the frame payload",
	"http2: frame too large",
	"connection error: PROTOCOL_ERROR",
	"connection error: FRAME_SIZE_ERROR",
	"connection error: COMPRESSION_ERROR",
	"connection error: FLOW_CONTROL_ERROR",
	// The peer never sent its SETTINGS: whatever it is, not an HTTP/2
	// server (which of this and the frame error a request sees is a race
	// inside net/http).
	"http2: client conn could not be established",
}

// isHTTPProtocol: the reply broke HTTP (record.ErrHTTPProtocol).
func isHTTPProtocol(msg string) bool {
	for _, s := range httpProtocolErrors {
		if strings.Contains(msg, s) {
			return true
		}
	}
	// One HTTP/2 stream reset for a protocol error (not a server that
	// merely cancelled it).
	return strings.Contains(msg, "stream error: ") && strings.Contains(msg, "PROTOCOL_ERROR")
}

// isLocalResource: this machine ran out of descriptors, ports or buffers.
func isLocalResource(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.ENOBUFS)
}

func isConnectTimeout(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && op.Timeout() {
		return true
	}
	// net/http reports a slow handshake with an unexported error type.
	return strings.Contains(err.Error(), "TLS handshake timeout")
}

func isTLS(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		header   tls.RecordHeaderError
		alert    tls.AlertError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	return errors.As(err, &verify) || errors.As(err, &header) || errors.As(err, &alert) ||
		errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		strings.Contains(err.Error(), "tls: ")
}

// isReset covers a connection the server dropped: an RST, a write to a
// closed socket, or an EOF in the middle of the reply (a truncated chunked
// body gives io.ErrUnexpectedEOF, an EOF before the status line io.EOF).
func isReset(err error) bool {
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "server closed idle connection") ||
		strings.Contains(s, "connection reset")
}

// netMessage drops the "Post URL:" wrapper: the URL is known from the plan
// and may carry credentials.
func netMessage(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && strings.HasPrefix(err.Error(), "Post ") {
		if inner := ue.Unwrap(); inner != nil {
			return inner.Error()
		}
	}
	return err.Error()
}

// httpError records a non-2xx reply with the message the server gave.
func (cl *call) httpError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrBody))
	cl.t.BytesIn = int64(len(body))
	kind := record.ErrHTTP4xx
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		kind = record.ErrHTTP429
		cl.t.RetryAfter = RetryAfter(resp.Header.Get("Retry-After"), time.Now())
	case code >= 500:
		kind = record.ErrHTTP5xx
		if code == http.StatusServiceUnavailable {
			cl.t.RetryAfter = RetryAfter(resp.Header.Get("Retry-After"), time.Now())
		}
	case code < 400:
		kind = record.ErrOther
	}
	msg := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		msg += ": " + redirectText(resp)
	} else if text := cl.c.httpErrorText(body); text != "" {
		msg += ": " + text
	}
	return &failure{kind, msg}
}

// errorText pulls the human message out of an error body or event: the
// shapes OpenAI, vLLM, TGI, FastAPI and llama.cpp use, else the raw text.
func errorText(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil {
		return string(body)
	}
	var inner struct {
		Message string `json:"message"`
	}
	var s string
	switch {
	case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
		return inner.Message
	case json.Unmarshal(v.Error, &s) == nil && s != "":
		return s
	case v.Message != "":
		return v.Message
	case json.Unmarshal(v.Detail, &s) == nil && s != "":
		return s
	}
	return string(body)
}

// decodeJSONString decodes the raw contents of a JSON string.
func decodeJSONString(raw []byte) string {
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s) != nil {
		return string(raw)
	}
	return s
}

// sanitize makes a server- or network-supplied message safe for a record:
// the API key and the other secrets are redacted, control characters and runs of space become one
// space, invalid UTF-8 is dropped, and the result is cut to maxErrMsg
// bytes. Redaction comes first so that truncation cannot leave part of a
// key behind.
func (c *OpenAI) sanitize(msg string) string {
	return SanitizeMessage(c.redact, msg)
}

// SanitizeMessage is sanitize with the secrets of redact: what any
// server- or network-supplied text must pass through before it reaches a
// record, a terminal or a page (no secret, no escape sequence, one line).
func SanitizeMessage(redact record.Redactor, msg string) string {
	msg = redact.Redact(msg)
	msg = strings.ToValidUTF8(msg, "")
	var b strings.Builder
	space := false
	for _, r := range msg {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
		if b.Len() > maxErrMsg {
			break
		}
	}
	return truncate(b.String(), maxErrMsg)
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// streamError classifies an error object that came inside a 200 reply (an
// SSE error event or a whole body). When it carries a 4xx status code it is
// a rejection like an HTTP 4xx reply, so bad-input classes count it as
// expected: llama.cpp answers a too-long streamed prompt with HTTP 200 and
// `error: {"code": 400, ...}`, vLLM with `data: {"error": {..., "code": 400}}`.
// Any other code (a 5xx, a string code, none) stays a stream error event.
func streamError(prefix string, data []byte) error {
	code := errorCode(data)
	kind := record.ErrStreamErrorEvent
	switch {
	case code == http.StatusTooManyRequests:
		kind = record.ErrHTTP429
	case code >= 400 && code < 500:
		kind = record.ErrHTTP4xx
	}
	if kind == record.ErrStreamErrorEvent {
		return &failure{kind, prefix + errorText(data)}
	}
	return &failure{kind, fmt.Sprintf("%scode %d in a 200 reply: %s", prefix, code, errorText(data))}
}

// errorCode is the numeric status code an error object carries, at its top
// level (llama.cpp's error event) or inside its "error" object (vLLM,
// OpenAI), or 0 when there is none.
func errorCode(data []byte) int {
	var v struct {
		Code  json.RawMessage `json:"code"`
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &v) != nil {
		return 0
	}
	var n int
	if json.Unmarshal(v.Code, &n) == nil && n != 0 {
		return n
	}
	var inner struct {
		Code json.RawMessage `json:"code"`
	}
	if json.Unmarshal(v.Error, &inner) == nil && json.Unmarshal(inner.Code, &n) == nil {
		return n
	}
	return 0
}
