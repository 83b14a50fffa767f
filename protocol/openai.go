package protocol

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferload/inferload/internal/inputfile"
	"github.com/inferload/inferload/record"
)

// DefaultConnectTimeout bounds TCP connect plus TLS handshake when
// OpenAIOptions.ConnectTimeout is zero.
const DefaultConnectTimeout = 10 * time.Second

// defaultIdlePerHost keeps a connection per stream alive between requests
// when MaxConns is unlimited: net/http's default of 2 would make a
// 1,000-stream test reconnect on almost every request.
const defaultIdlePerHost = 16384

// maxResponseHeader bounds the headers of one reply, 1xx replies included.
const maxResponseHeader = 64 << 10

// maxEventsCap bounds the Trace.EventsUS preallocation a Request may ask
// for: no more than a trace ever keeps.
const maxEventsCap = record.MaxEventsKept

// OpenAIOptions configures an OpenAI-compatible client. The zero value of
// every field means its documented default.
type OpenAIOptions struct {
	// BaseURL is the API root, e.g. http://127.0.0.1:8000/v1 for the
	// OpenAI APIs, or the server's root (http://127.0.0.1:8080) for the
	// native ones (APITGI, ...); a trailing slash is ignored. Required.
	BaseURL string
	// Model names the model in the path of the APIs that need it
	// (APITriton, APITorchServe); the others ignore it.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>". The caller
	// resolves it (from the environment or a file); it is never logged and
	// is redacted from every Trace.ErrMsg.
	APIKey string
	// Headers are added to every request. They override the defaults
	// (Content-Type, Accept, User-Agent) but not the APIKey's
	// Authorization. A "Host" entry sets the request's Host.
	Headers map[string]string
	// Secrets are further values redacted from every Trace.ErrMsg, as the
	// APIKey is: secret headers' values (plan.Plan.Secrets), so a server
	// that echoes them cannot get them into a record.
	Secrets []string
	// CAFile is a PEM bundle trusted in addition to the system roots.
	CAFile string
	// CAPEM, when set, is CAFile's contents, already read by the caller
	// (bounded and interruptible, as experiment reads it); CAFile then
	// only names it in errors.
	CAPEM []byte
	// Insecure skips TLS certificate verification.
	Insecure bool
	// ConnectTimeout bounds TCP connect plus TLS handshake
	// (default DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// TTFTTimeout bounds the time from Do to the first content event
	// (0: none).
	TTFTTimeout time.Duration
	// TotalTimeout bounds a whole request (0: none; ctx still applies).
	TotalTimeout time.Duration
	// MaxConns caps connections to the target (0: unlimited). Requests over
	// the cap wait for a connection; Trace.Sent excludes that wait.
	MaxConns int
	// Triton names the tensors of APITritonInfer requests, and of
	// APITritonGRPC ones to a tensor model (Triton.Input set).
	Triton TritonTensors
	// HTTP, when not nil, is what APIHTTP requests send and how their
	// replies are read; without it the client does not speak APIHTTP.
	HTTP *HTTPAPIOptions
	// UserClock stamps token events with the user-space clock (when the
	// client's read returned) even where the kernel's receive stamps are
	// available. By default (false) they are used where supported
	// (Linux): see Clock and docs/metrics.md#two-clocks-for-arrivals.
	UserClock bool
	// HTTP2 speaks HTTP/2 instead of HTTP/1.1: HTTP2TLS (h2, negotiated by
	// ALPN; an https base URL) or HTTP2Cleartext (h2c with prior
	// knowledge; an http base URL). Streams then share connections, and
	// events are stamped on the user-space clock: a connection's reads
	// carry frames of many streams, so a read's kernel stamp is no
	// stream's own.
	HTTP2 string
	// ThinkTags reads text between <think> and </think> in a chat or
	// completions answer as reasoning (a reasoning model served without
	// a reasoning parser), so it is timed as reasoning rather than as the
	// answer (docs/metrics.md#think-tags). Off by default: an answer may
	// hold such text literally.
	ThinkTags bool
}

// The values of OpenAIOptions.HTTP2 (plan target.http2, --http2).
const (
	HTTP2TLS       = "h2"
	HTTP2Cleartext = "h2c"
)

// OpenAI is a Client for OpenAI-compatible /chat/completions and
// /completions endpoints, and /embeddings (vLLM, SGLang, TGI, llama.cpp,
// Ollama, ...), and for the servers' native APIs (APITGI, APIOllama,
// APITriton, APITorchServe): each request's API picks its endpoint and
// reply reader, over one connection pool. It speaks HTTP/1.1 with one
// connection per in-flight request, as these servers are usually
// benchmarked, or HTTP/2 when OpenAIOptions.HTTP2 asks, and is safe for
// concurrent use.
type OpenAI struct {
	tr           *http.Transport
	eps          map[API]endpoint
	host         string // Host header override, "" for the URL's
	streamHeader http.Header
	plainHeader  http.Header
	// msgStreamHeader and msgPlainHeader are the Messages API's
	// (anthropic-version, the key as x-api-key).
	msgStreamHeader, msgPlainHeader http.Header
	redact                          record.Redactor // the API key and opts.Secrets
	ttft, total                     time.Duration
	readers                         sync.Pool // *SSEReader
	lines                           sync.Pool // *LineReader
	shapes                          sync.Pool // *chunkShape
	kernelClock                     bool      // connections ask for kernel receive stamps
	thinkTags                       bool      // OpenAIOptions.ThinkTags
	tensors                         TritonTensors
	httpAPI                         *httpAPI // nil without OpenAIOptions.HTTP
	grpc                            *grpcConn

	// formStreamHeader and formPlainHeader are the transcriptions API's
	// (a multipart body).
	formStreamHeader, formPlainHeader http.Header
	// model is OpenAIOptions.Model, which a realtime session's URL names.
	model string
}

// NewOpenAI validates opts and builds a client with a connection pool sized
// for thousands of concurrent streams.
func NewOpenAI(opts OpenAIOptions) (*OpenAI, error) {
	base, err := parseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	if err := checkDurations(opts); err != nil {
		return nil, err
	}
	tlsConf, err := tlsConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := checkHTTP2(opts.HTTP2, base); err != nil {
		return nil, err
	}
	var h *httpAPI
	httpPath := ""
	if opts.HTTP != nil {
		if h, err = opts.HTTP.parse(); err != nil {
			return nil, err
		}
		httpPath = opts.HTTP.Path
	}
	kernel := ClockFor(opts.UserClock || opts.HTTP2 != "") == ClockKernel
	c := &OpenAI{
		tr:          transport(opts, tlsConf, kernel),
		kernelClock: kernel,
		thinkTags:   opts.ThinkTags,
		eps:         endpoints(base, opts.Model, h, httpPath),
		tensors:     opts.Triton,
		httpAPI:     h,
		grpc:        newGRPCConn(base, opts, tlsConf),
		model:       opts.Model,
		redact:      record.NewRedactor(append([]string{opts.APIKey}, opts.Secrets...)),
		ttft:        opts.TTFTTimeout,
		total:       opts.TotalTimeout,
	}
	if err := c.buildHeaders(opts); err != nil {
		return nil, err
	}
	c.initPools()
	return c, nil
}

// initPools makes the stream readers' pools.
func (c *OpenAI) initPools() {
	c.readers.New = func() any { return NewSSEReader(nil, time.Now) }
	c.lines.New = func() any { return NewLineReader(nil, time.Now) }
	c.shapes.New = func() any { return new(chunkShape) }
}

// Clock is the clock this client stamps token events with: ClockKernel
// where the system gives receive stamps and UserClock is off, else
// ClockUser. A connection whose socket refuses the option still falls
// back to ClockUser, which its traces' Clock says.
func (c *OpenAI) Clock() string {
	if c.kernelClock {
		return ClockKernel
	}
	return ClockUser
}

// Close releases idle connections. In-flight HTTP requests are not
// affected; triton-grpc requests in flight fail, as their one connection
// closes. The client stays usable: later requests open new connections.
func (c *OpenAI) Close() {
	c.tr.CloseIdleConnections()
	c.grpc.close()
}

// CheckBaseURL reports whether raw is a base URL NewOpenAI accepts, without
// building a client: a plan validates its URLs with it.
func CheckBaseURL(raw string) error {
	_, err := parseBaseURL(raw)
	return err
}

// parseBaseURL checks that raw is an absolute http(s) URL with no query.
// The endpoints' URLs are parsed once here and shared read-only by every
// request.
func parseBaseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("base URL is empty (want e.g. http://127.0.0.1:8000/v1)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("base URL %q: scheme must be http or https%s", u.Redacted(), GRPCSchemeHint(u.Scheme))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("base URL %q: no host", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("base URL %q: must not have a query or fragment", u.Redacted())
	}
	return u, nil
}

// GRPCSchemeHint is what an error about a base URL's scheme adds when the
// scheme is a gRPC one (grpc://, grpcs://): how the triton-grpc API's
// URL is written instead. Empty for any other scheme.
func GRPCSchemeHint(scheme string) string {
	switch strings.ToLower(scheme) {
	case "grpc":
		return " (a gRPC server without TLS is http://host:port)"
	case "grpcs":
		return " (a gRPC server over TLS is https://host:port)"
	}
	return ""
}

// checkHTTP2 refuses an HTTP/2 mode the base URL's scheme cannot carry.
func checkHTTP2(mode string, base *url.URL) error {
	switch {
	case mode == "":
	case mode == HTTP2TLS && base.Scheme != "https":
		return fmt.Errorf("HTTP/2 %q is negotiated over TLS: the base URL must be https:// (for cleartext HTTP/2 use %q)", mode, HTTP2Cleartext)
	case mode == HTTP2Cleartext && base.Scheme != "http":
		return fmt.Errorf("HTTP/2 %q is cleartext: the base URL must be http:// (over TLS use %q)", mode, HTTP2TLS)
	case mode != HTTP2TLS && mode != HTTP2Cleartext:
		return fmt.Errorf("HTTP/2 mode %q: want %q (over TLS) or %q (cleartext, prior knowledge)", mode, HTTP2TLS, HTTP2Cleartext)
	}
	return nil
}

func checkDurations(opts OpenAIOptions) error {
	switch {
	case opts.ConnectTimeout < 0:
		return fmt.Errorf("connect timeout %v is negative", opts.ConnectTimeout)
	case opts.TTFTTimeout < 0:
		return fmt.Errorf("TTFT timeout %v is negative", opts.TTFTTimeout)
	case opts.TotalTimeout < 0:
		return fmt.Errorf("total timeout %v is negative", opts.TotalTimeout)
	case opts.MaxConns < 0:
		return fmt.Errorf("max connections %d is negative", opts.MaxConns)
	}
	return nil
}

// tlsConfig trusts the system roots plus opts.CAFile.
func tlsConfig(opts OpenAIOptions) (*tls.Config, error) {
	conf := &tls.Config{InsecureSkipVerify: opts.Insecure} //nolint:gosec // explicit user switch
	if opts.CAFile == "" {
		return conf, nil
	}
	pem := opts.CAPEM
	var err error
	if pem == nil {
		pem, err = inputfile.Read(context.Background(), opts.CAFile, inputfile.CA)
	}
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s: no PEM certificate found", opts.CAFile)
	}
	conf.RootCAs = pool
	return conf, nil
}

func transport(opts OpenAIOptions, tlsConf *tls.Config, kernelClock bool) *http.Transport {
	connect := opts.ConnectTimeout
	if connect == 0 {
		connect = DefaultConnectTimeout
	}
	idle := defaultIdlePerHost
	if opts.MaxConns > 0 {
		idle = opts.MaxConns
	}
	d := &net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}
	dial := d.DialContext
	if kernelClock {
		dial = stampedDial(d)
	}
	tr := &http.Transport{
		// No proxy from the environment: a load test measures the target,
		// and a proxy picked up by accident would be measured instead.
		Proxy:               nil,
		DialContext:         dial,
		TLSClientConfig:     tlsConf,
		TLSHandshakeTimeout: connect,
		DisableCompression:  true,
		// A server's headers are a few KiB; net/http's default allows
		// 10 MiB per reply (1xx replies included), which a hostile target
		// could make every stream hold.
		MaxResponseHeaderBytes: maxResponseHeader,
		MaxIdleConnsPerHost:    idle,
		MaxConnsPerHost:        opts.MaxConns,
		IdleConnTimeout:        90 * time.Second,
	}
	if opts.HTTP2 != "" {
		// Only HTTP/2: a server that does not speak it fails the request
		// instead of being measured on HTTP/1.1 unnoticed.
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP2(opts.HTTP2 == HTTP2TLS)
		tr.Protocols.SetUnencryptedHTTP2(opts.HTTP2 == HTTP2Cleartext)
	}
	return tr
}

// stampedDial dials with d and turns on the connection's kernel receive
// stamps; a connection that refuses them is used as it is.
func stampedDial(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if sc := newStampConn(conn); sc != nil {
			return sc, nil
		}
		return conn, nil
	}
}

// stampConnOf finds the stamped connection under conn (TLS included),
// nil when it has none.
func stampConnOf(conn net.Conn) *stampConn {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	sc, _ := conn.(*stampConn)
	return sc
}

// buildHeaders renders the two header sets once; every request shares one
// of them read-only, so Do copies no headers.
func (c *OpenAI) buildHeaders(opts OpenAIOptions) error {
	base := http.Header{}
	base.Set("Content-Type", "application/json")
	base.Set("User-Agent", "inferload")
	// A nil X-Idempotency-Key is never sent, but it lets net/http resend a
	// POST that hit a keep-alive connection the server had just closed:
	// that race is not a failure of the target.
	base["X-Idempotency-Key"] = nil
	c.streamHeader, c.plainHeader = base.Clone(), base
	c.streamHeader.Set("Accept", "text/event-stream")
	c.plainHeader.Set("Accept", "application/json")
	// The Messages API's sets: its version header, before target.headers
	// so that they may override it.
	c.msgStreamHeader, c.msgPlainHeader = c.streamHeader.Clone(), c.plainHeader.Clone()
	c.msgStreamHeader.Set("Anthropic-Version", AnthropicVersion)
	c.msgPlainHeader.Set("Anthropic-Version", AnthropicVersion)
	sets := []http.Header{c.streamHeader, c.plainHeader, c.msgStreamHeader, c.msgPlainHeader}
	for k, v := range opts.Headers {
		if err := checkHeader(k, v); err != nil {
			return err
		}
		if http.CanonicalHeaderKey(k) == "Host" {
			c.host = v
			continue
		}
		for _, h := range sets {
			h.Set(k, v)
		}
	}
	if opts.APIKey != "" {
		if strings.ContainsAny(opts.APIKey, "\r\n\x00") {
			return errors.New("API key contains a line break or NUL")
		}
		c.streamHeader.Set("Authorization", "Bearer "+opts.APIKey)
		c.plainHeader.Set("Authorization", "Bearer "+opts.APIKey)
		// Anthropic takes the key as x-api-key, not a bearer token.
		c.msgStreamHeader.Set("X-Api-Key", opts.APIKey)
		c.msgPlainHeader.Set("X-Api-Key", opts.APIKey)
	}
	// The multipart sets last: their Content-Type names the body's
	// boundary, which no target.headers entry may change.
	c.formStreamHeader, c.formPlainHeader = c.streamHeader.Clone(), c.plainHeader.Clone()
	c.formStreamHeader.Set("Content-Type", formContentType)
	c.formPlainHeader.Set("Content-Type", formContentType)
	return nil
}

// traceHeader adds one request's join key to the shared header set: a
// shallow copy (the shared values are never written), one map a request.
func traceHeader(shared http.Header, req *Request) http.Header {
	h := make(http.Header, len(shared)+2)
	for k, v := range shared {
		h[k] = v
	}
	h["Traceparent"] = []string{record.TraceParent(req.TraceID, req.Attempt)}
	h["X-Request-Id"] = []string{requestID(req)}
	return h
}

// checkHeader rejects what net/http would refuse at request time, so the
// mistake shows at startup instead of as thousands of failed requests.
func checkHeader(name, value string) error {
	if name == "" {
		return errors.New("header with an empty name")
	}
	for _, r := range name {
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return fmt.Errorf("header name %q: invalid character %q", name, r)
		}
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return fmt.Errorf("header %s: value contains a line break or NUL", name)
	}
	return nil
}

// Do sends req and describes what happened in t (which must not be nil;
// Do resets it first, keeping its EventsUS array). It implements Client: it
// never panics, returns once the reply is read, the request failed, or ctx
// is done, and always closes the body. The TTFT timeout runs from Do's
// start, so it also bounds connecting and waiting for a MaxConns slot.
func (c *OpenAI) Do(ctx context.Context, req *Request, t *Trace) {
	t.Reset()
	t.Start = time.Now()
	u, hdr, err := c.route(req)
	if err != nil {
		c.finish(t, record.ErrOther, err.Error())
		return
	}
	if req.TraceID != ([16]byte{}) {
		hdr = traceHeader(hdr, req)
	}
	if req.ExpectAnswer != "" {
		hdr = hdr.Clone()
		hdr.Set(ExpectAnswerHeader, req.ExpectAnswer)
	}
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lim := c.limits(req.Timeouts)
	if lim.Total > 0 {
		tm := time.AfterFunc(lim.Total, func() { cancel(errTotalTimeout) })
		defer tm.Stop()
	}
	var ttft *time.Timer
	if lim.TTFT > 0 {
		ttft = time.AfterFunc(lim.TTFT, func() { cancel(errTTFTTimeout) })
		defer ttft.Stop()
	}
	cl := call{c: c, parent: ctx, ctx: callCtx, cancel: cancel, ttft: ttft, lim: lim, req: req, t: t}
	if lim.Connect > 0 {
		cl.connect = time.AfterFunc(lim.Connect, func() {
			if !cl.connected.Load() {
				cancel(errConnectTimeout)
			}
		})
		defer cl.connect.Stop()
	}
	cl.method = c.eps[req.API].method
	cl.run(u, hdr)
	cl.clock.settle(t)
}

// limits resolves the timeouts of one request: the client's, with the
// request's non-zero overrides on top. Connect is only set by an override
// (the client's own connect bound lives in its dialer).
func (c *OpenAI) limits(o *Timeouts) Timeouts {
	lim := Timeouts{TTFT: c.ttft, Total: c.total}
	if o == nil {
		return lim
	}
	lim.Connect = o.Connect
	lim.TTFT = cmp.Or(o.TTFT, lim.TTFT)
	lim.Total = cmp.Or(o.Total, lim.Total)
	return lim
}

// route picks the endpoint and header set for req.
func (c *OpenAI) route(req *Request) (*url.URL, http.Header, error) {
	if req == nil {
		return nil, nil, errors.New("nil request")
	}
	if !req.API.Known() {
		return nil, nil, fmt.Errorf("API %q is not spoken by this client (want %s)", req.API, APINames())
	}
	if req.API == APITritonGRPC {
		return nil, nil, nil // the gRPC connection's (runGRPC)
	}
	ep, ok := c.eps[req.API]
	switch {
	case !ok && req.API == APIHTTP:
		return nil, nil, fmt.Errorf("API %s %w", req.API, errNoHTTP)
	case !ok:
		return nil, nil, fmt.Errorf("API %s %w", req.API, errNoModel)
	case req.API == APIHTTP && c.httpAPI.response == ResponseSSE:
		return ep.plain, c.streamHeader, nil
	case req.API == APIHTTP:
		return ep.plain, c.plainHeader, nil
	}
	stream, plain := c.streamHeader, c.plainHeader
	switch req.API {
	case APIMessages:
		stream, plain = c.msgStreamHeader, c.msgPlainHeader
	case APITranscriptions:
		stream, plain = c.formStreamHeader, c.formPlainHeader
	}
	if req.Stream && req.API.Streams() {
		return ep.stream, stream, nil
	}
	return ep.plain, plain, nil
}

// finish records a failure that happened before anything was sent.
func (c *OpenAI) finish(t *Trace, kind record.ErrorKind, msg string) {
	t.End = time.Now()
	t.Err = kind
	t.ErrMsg = c.sanitize(msg)
}

// call is one request in flight.
type call struct {
	c      *OpenAI
	parent context.Context // the caller's: done means canceled
	ctx    context.Context // parent plus this client's timeouts
	cancel context.CancelCauseFunc
	ttft   *time.Timer // nil without a TTFT timeout
	lim    Timeouts    // the timeouts in force, for error messages
	req    *Request
	t      *Trace
	hdr    http.Header // the reply's headers, once it came
	// connect, when not nil, is a per-request connect deadline; connected
	// is set once a connection is in hand so a late firing is ignored.
	connect   *time.Timer
	connected atomic.Bool
	// sc is the connection's kernel stamps, nil on the user-space clock.
	sc *stampConn
	// method is the endpoint's HTTP method, "" for POST.
	method string
	// clock keeps the trace's arrivals on one clock (recordClock).
	clock recordClock
	// think finds <think> blocks in the answer text when the client's
	// thinkTags is on.
	think thinkTags
}

// rx is the request's source of kernel receive stamps, nil for none.
func (cl *call) rx() rxSource {
	if cl.sc == nil {
		return nil // not a nil *stampConn in a non-nil interface
	}
	return cl.sc
}

// run sends the request and reads the reply into the trace.
func (cl *call) run(u *url.URL, hdr http.Header) {
	switch cl.req.API {
	case APITritonGRPC:
		cl.runGRPC()
		return
	case APIRealtime:
		cl.runRealtime(u.String(), hdr)
		return
	}
	resp, err := cl.send(u, hdr)
	if err != nil {
		cl.fail(err)
		return
	}
	defer resp.Body.Close()
	cl.t.Status = resp.StatusCode
	cl.hdr = resp.Header
	switch {
	case resp.StatusCode < 100 || resp.StatusCode > 599:
		err = &failure{record.ErrHTTPProtocol, fmt.Sprintf("HTTP status %d is outside 100-599", resp.StatusCode)}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		err = cl.httpError(resp)
	case unaskedEncoding(resp) != nil:
		err = unaskedEncoding(resp)
	case cl.req.API == APIEmbeddings:
		err = cl.wholeBody(resp.Body, cl.applyEmbeddings)
	case cl.req.API == APITritonInfer:
		err = cl.wholeBody(resp.Body, cl.applyTritonInfer)
	case cl.req.API == APIHTTP:
		err = cl.readHTTP(resp)
	case cl.req.API == APIImages:
		err = cl.wholeBody(resp.Body, cl.applyImages)
	case wholeReaders[cl.req.API] != nil:
		err = cl.wholeBody(resp.Body, func(b []byte, a arrival) error { return wholeReaders[cl.req.API](cl, b, a) })
	case cl.req.Stream:
		err = replyReaders[cl.req.API].stream(cl, resp)
	default:
		body := replyReaders[cl.req.API].body
		err = cl.wholeBody(resp.Body, func(b []byte, a arrival) error { return body(cl, b, a) })
	}
	if err != nil {
		cl.fail(err)
	}
}

// send writes the request. Trace.Sent is stamped when a connection is in
// hand and the first byte is about to be written, so neither dialing nor
// waiting for a pooled connection counts as server latency.
func (cl *call) send(u *url.URL, hdr http.Header) (*http.Response, error) {
	t := cl.t
	cl.reserveEvents()
	ct := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		t.Sent = time.Now()
		t.NewConn = !info.Reused
		cl.sc = stampConnOf(info.Conn)
		cl.gotConn()
	}}
	body := cl.req.Body
	if cl.req.API == APIHTTP && bytes.Contains(body, []byte(RequestIDPlaceholder)) {
		body = fillRequestID(body, requestID(cl.req))
	}
	hr := &http.Request{
		Method:     cmp.Or(cl.method, http.MethodPost),
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     hdr,
		Body:       io.NopCloser(bytes.NewReader(body)),
		// GetBody lets net/http resend the body after a keep-alive race.
		GetBody:       func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
		ContentLength: int64(len(body)),
		Host:          cmp.Or(cl.c.host, u.Host),
	}
	if len(body) == 0 {
		hr.Body, hr.GetBody = http.NoBody, nil
	}
	t.BytesOut = int64(len(body))
	resp, err := cl.c.tr.RoundTrip(hr.WithContext(httptrace.WithClientTrace(cl.ctx, ct)))
	cl.sentWhenWritten()
	if resp != nil {
		t.Proto = resp.Proto
	}
	return resp, err
}

// reserveEvents gives the trace room for the events the request expects.
func (cl *call) reserveEvents() {
	if cl.req.EventsCap > cap(cl.t.EventsUS) {
		cl.t.EventsUS = make([]int64, 0, min(cl.req.EventsCap, maxEventsCap))
	}
}

// sentWhenWritten moves Trace.Sent, on a stamped connection, to when the
// request's last byte was handed to the kernel: the server cannot start
// before then, and the time between taking the connection and writing
// (net/http writes on its own goroutine, which a busy client runs late)
// is the client's delay, not the server's. The reply's headers have
// arrived, so the request was written; a server that replies before
// reading the whole body leaves an earlier write, still the last one
// that counted.
func (cl *call) sentWhenWritten() {
	if cl.sc == nil {
		return
	}
	if w := cl.sc.wroteNano(); w != 0 {
		if at := monoAt(w); at.After(cl.t.Sent) {
			cl.t.Sent = at
		}
	}
}

// gotConn disarms the per-request connect deadline.
func (cl *call) gotConn() {
	if cl.connect != nil {
		cl.connected.Store(true)
		cl.connect.Stop()
	}
}

// fail classifies err into the trace.
func (cl *call) fail(err error) {
	if cl.t.End.IsZero() {
		cl.t.End = time.Now()
	}
	kind, msg := cl.classify(err)
	cl.t.Err = kind
	cl.t.ErrMsg = cl.c.sanitize(msg)
}
