package protocol

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"

	"github.com/inferload/inferload/record"
)

// PromptPlaceholder is replaced by the request's prompt in an HTTPCall's
// URL (query-escaped) and body (JSON-string-escaped, without quotes, so
// `{"q": "{{prompt}}"}` stays valid JSON whatever the prompt holds).
const PromptPlaceholder = "{{prompt}}"

// DefaultHTTPCallTimeout bounds an HTTP call when HTTPCallOptions.Timeout
// is zero: a retrieval step must never hang a chain.
const DefaultHTTPCallTimeout = 30 * time.Second

// maxHTTPCallBody bounds the reply an HTTP call reads (retrieved text is
// appended to a prompt, so megabytes would be a mistake anyway).
const maxHTTPCallBody = 4 << 20

// HTTPCallOptions configures an HTTPCall: a templated request to a
// non-LLM service, such as a vector database's search endpoint.
type HTTPCallOptions struct {
	// Method is the HTTP method (default GET, or POST when Body is set).
	Method string
	// URL is an absolute http(s) URL, a template (ParseTemplate):
	// PromptPlaceholder in it is replaced by the query-escaped prompt; the
	// other placeholders are empty (or 0) in a chain step.
	URL string
	// Headers are sent with every call.
	Headers map[string]string
	// Body is the request body template, as the http API's:
	// PromptPlaceholder in it is replaced by the JSON-escaped prompt.
	Body string
	// Extract picks the text the call yields from a JSON reply, as a
	// dot-separated path (see ExtractText); empty takes the whole body.
	Extract string
	// Timeout bounds the whole call (default DefaultHTTPCallTimeout).
	Timeout time.Duration
	// Secrets are redacted from every Trace.ErrMsg (plan.Plan.Secrets).
	Secrets []string
}

// HTTPCall sends one templated HTTP request per Do and returns the text
// its reply yields. It is safe for concurrent use.
type HTTPCall struct {
	opts   HTTPCallOptions
	url    *Template
	body   *Template
	redact record.Redactor
	client *http.Client
	header http.Header
}

// Validate checks opts as NewHTTPCall does, without building a call: a
// plan validates its http steps with it.
func (opts HTTPCallOptions) Validate() error {
	_, _, err := opts.templates()
	if err != nil {
		return err
	}
	u, err := url.Parse(strings.ReplaceAll(opts.URL, PromptPlaceholder, "x"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("http call: url %q: want an absolute http:// or https:// URL", opts.URL)
	}
	if opts.Timeout < 0 {
		return errors.New("http call: timeout must not be negative")
	}
	if _, err := parseExtract(opts.Extract); err != nil {
		return fmt.Errorf("http call: %w", err)
	}
	for k, v := range opts.Headers {
		if err := checkHeader(k, v); err != nil {
			return fmt.Errorf("http call: %w", err)
		}
	}
	return nil
}

// templates parses the URL and body templates (the same placeholders
// as the http API's, of which only {{prompt}} has a value in a chain).
func (opts HTTPCallOptions) templates() (u, body *Template, err error) {
	if u, err = ParseTemplate(opts.URL, EscapeQuery); err != nil {
		return nil, nil, fmt.Errorf("http call: url: %w", err)
	}
	if body, err = ParseTemplate(opts.Body, EscapeJSON); err != nil {
		return nil, nil, fmt.Errorf("http call: body: %w", err)
	}
	return u, body, nil
}

// NewHTTPCall validates opts and builds the call with its own connection
// pool.
func NewHTTPCall(opts HTTPCallOptions) (*HTTPCall, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Method == "" {
		opts.Method = http.MethodGet
		if opts.Body != "" {
			opts.Method = http.MethodPost
		}
	}
	opts.Method = strings.ToUpper(opts.Method)
	if opts.Timeout == 0 {
		opts.Timeout = DefaultHTTPCallTimeout
	}
	hdr := http.Header{"User-Agent": {"inferload"}}
	if opts.Body != "" && strings.HasPrefix(strings.TrimSpace(opts.Body), "{") {
		hdr.Set("Content-Type", "application/json")
	}
	for k, v := range opts.Headers {
		hdr.Set(k, v)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: defaultIdlePerHost, ForceAttemptHTTP2: false}
	u, body, _ := opts.templates() // checked by Validate
	return &HTTPCall{opts: opts, url: u, body: body, redact: record.NewRedactor(opts.Secrets), client: &http.Client{Transport: tr}, header: hdr}, nil
}

// Close releases idle connections.
func (h *HTTPCall) Close() { h.client.CloseIdleConnections() }

// Do sends the call with f filling its templates and describes it in t as
// a model call would be: Start, Sent, End, Status, BytesOut and BytesIn,
// and on failure Err (the same taxonomy) and ErrMsg. A trace that is not
// zero is sent as a model call sends it (traceparent with attempt's span,
// x-request-id) and fills {{request_id}}. It returns the extracted text
// ("" on failure). The reply's arrival is its FirstToken.
func (h *HTTPCall) Do(ctx context.Context, f TemplateFields, trace [16]byte, attempt int, t *Trace) string {
	t.Reset()
	t.Start = time.Now()
	ctx, cancel := context.WithTimeoutCause(ctx, h.opts.Timeout, errTotalTimeout)
	defer cancel()
	text, err := h.do(ctx, f, &Request{TraceID: trace, Attempt: attempt}, t)
	t.End = time.Now()
	if err != nil {
		t.Err, t.ErrMsg = h.classify(ctx, err)
		t.ErrMsg = SanitizeMessage(h.redact, t.ErrMsg)
		return ""
	}
	return text
}

// do sends the request and reads the reply.
func (h *HTTPCall) do(ctx context.Context, f TemplateFields, ids *Request, t *Trace) (string, error) {
	req, err := h.request(ctx, f, ids, t)
	if err != nil {
		return "", &failure{record.ErrOther, err.Error()}
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	t.Status = resp.StatusCode
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPCallBody+1))
	t.BytesIn = int64(len(body))
	if err != nil {
		return "", err
	}
	t.FirstToken = time.Now()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", statusFailure(resp.StatusCode, body)
	}
	if len(body) > maxHTTPCallBody {
		return "", &failure{record.ErrMalformedEvent, fmt.Sprintf("reply body over %d MiB", maxHTTPCallBody>>20)}
	}
	text, err := ExtractText(body, h.opts.Extract)
	if err != nil {
		return "", &failure{record.ErrMalformedEvent, err.Error()}
	}
	return text, nil
}

// request renders the templates with f and the request id of ids (its
// TraceID and Attempt only).
func (h *HTTPCall) request(ctx context.Context, f TemplateFields, ids *Request, t *Trace) (*http.Request, error) {
	id := requestID(ids)
	u := string(fillRequestID(h.url.Render(f), id))
	var body io.Reader
	if h.opts.Body != "" {
		b := fillRequestID(h.body.Render(f), id)
		t.BytesOut = int64(len(b))
		body = bytes.NewReader(b)
	}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { t.Sent = time.Now() },
	})
	req, err := http.NewRequestWithContext(ctx, h.opts.Method, u, body)
	if err != nil {
		return nil, fmt.Errorf("http call: %w", err)
	}
	req.Header = h.header.Clone()
	if id != "" {
		req.Header = traceHeader(req.Header, ids)
	}
	if host := req.Header.Get("Host"); host != "" {
		req.Host = host
	}
	return req, nil
}

// statusFailure classifies a non-2xx reply like a model server's.
func statusFailure(code int, body []byte) error {
	kind := record.ErrHTTP4xx
	switch {
	case code == http.StatusTooManyRequests:
		kind = record.ErrHTTP429
	case code >= 500:
		kind = record.ErrHTTP5xx
	case code < 400:
		kind = record.ErrOther
	}
	msg := fmt.Sprintf("HTTP %d", code)
	if text := errorText(body); text != "" {
		msg += ": " + text
	}
	return &failure{kind, msg}
}

// classify maps a failed call to the error taxonomy: a failure found in
// the reply, then the timeout or the caller's cancellation, then the
// network error.
func (h *HTTPCall) classify(ctx context.Context, err error) (record.ErrorKind, string) {
	var f *failure
	if errors.As(err, &f) {
		return f.kind, f.msg
	}
	if context.Cause(ctx) == errTotalTimeout {
		return record.ErrTimeoutBeforeTTFT, fmt.Sprintf("no reply within the timeout (%v)", h.opts.Timeout)
	}
	if ctx.Err() != nil {
		return record.ErrCanceled, canceledMsg(context.Cause(ctx))
	}
	return classifyNet(err)
}
