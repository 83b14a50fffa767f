package protocol

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// errCase is one way a target can misbehave and how it must be classified.
type errCase struct {
	name    string
	handler http.HandlerFunc // the misbehaving server, when one is needed
	target  func(t *testing.T) string
	opts    func(*OpenAIOptions)
	plain   bool          // non-streaming request
	cancel  chan struct{} // closed by the server when the caller should cancel
	kind    record.ErrorKind
	status  int    // anyStatus when the race between RST or cancel and the reply decides it
	msg     string // substring of ErrMsg
	events  int    // content events that must have been kept, or anyEvents
}

// anyStatus and anyEvents mark rows where the outcome is fixed but how much
// of the reply arrived first depends on the race between the reply's bytes
// and an RST or a cancel.
const (
	anyStatus = -1
	anyEvents = -1
)

func TestErrorKinds(t *testing.T) {
	t.Parallel()
	for _, tc := range errCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := ""
			switch {
			case tc.target != nil:
				base = tc.target(t)
			default:
				srv := httptest.NewServer(tc.handler)
				t.Cleanup(srv.Close)
				base = srv.URL + "/v1"
			}
			c := newClient(t, base, tc.opts)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if tc.cancel != nil {
				go func() {
					select {
					case <-tc.cancel:
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			var tr Trace
			c.Do(ctx, chatRequest(!tc.plain), &tr)
			checkTrace(t, &tr)
			if tc.status == anyStatus {
				tc.status = tr.Status
			}
			if tc.events == anyEvents {
				tc.events = tr.ContentEvents
			}
			if tr.Err != tc.kind || tr.Status != tc.status || !strings.Contains(tr.ErrMsg, tc.msg) {
				t.Errorf("got %q status %d %q; want %q status %d message containing %q",
					tr.Err, tr.Status, tr.ErrMsg, tc.kind, tc.status, tc.msg)
			}
			if tr.ContentEvents != tc.events {
				t.Errorf("%d content events kept, want %d", tr.ContentEvents, tc.events)
			}
		})
	}
}

// errCases builds the table; every row gets fresh channels.
func errCases() []errCase {
	canceled := make(chan struct{})
	return []errCase{
		// Nothing listens on the port.
		{name: "connection refused", target: refusedTarget, kind: record.ErrConnRefused, msg: "refused"},
		// The listener's accept queue is full, so the SYN is dropped until the connect timeout.
		{name: "connect timeout", target: fullBacklogTarget, kind: record.ErrConnectTimeout, msg: "timeout",
			opts: func(o *OpenAIOptions) { o.ConnectTimeout = 100 * time.Millisecond }},
		// The server resets the connection instead of answering.
		{name: "reset before reply", handler: resetHandler(""), kind: record.ErrConnReset},
		// The server resets the connection in the middle of the stream.
		{name: "reset mid stream", handler: resetHandler("data: " + chatToken("a") + "\n\n"), kind: record.ErrConnReset, status: anyStatus, events: anyEvents},
		// The connection closes in the middle of a chunked body: unexpected EOF, events kept.
		{name: "eof mid stream", handler: truncatedHandler, kind: record.ErrConnReset, status: 200, events: 2},
		// The server closes the connection before any reply.
		{name: "eof before reply", handler: closeHandler, kind: record.ErrConnReset, msg: "EOF"},
		// HTTPS to a plain HTTP server: the first record is not TLS.
		{name: "tls to plain server", target: plainAsTLSTarget, kind: record.ErrTLS, msg: "tls"},
		// A certificate the client does not trust.
		{name: "tls unknown authority", target: tlsTarget, kind: record.ErrTLS, msg: "certificate"},
		// No content before the TTFT timeout; the role chunk does not count.
		{name: "ttft timeout", handler: stallAfter(roleChunk), kind: record.ErrTimeoutBeforeTTFT, status: 200, msg: "TTFT timeout",
			opts: func(o *OpenAIOptions) { o.TTFTTimeout = 100 * time.Millisecond }},
		// The total timeout fires before even the headers: before the first token.
		{name: "total timeout before headers", handler: stallHeaders, kind: record.ErrTimeoutBeforeTTFT, msg: "before any content",
			opts: func(o *OpenAIOptions) { o.TotalTimeout = 100 * time.Millisecond }},
		// The total timeout fires after the first token: after, with what arrived kept.
		{name: "total timeout after first token", handler: stallAfter(chatToken("a")), kind: record.ErrTimeoutAfterTTFT,
			status: 200, msg: "after 1 content events", events: 1,
			opts: func(o *OpenAIOptions) {
				o.TotalTimeout = 150 * time.Millisecond
				o.TTFTTimeout = 100 * time.Millisecond
			}},
		// A first token stops the TTFT timer: a stream slower than the TTFT timeout overall still succeeds.
		{name: "ttft timer stopped", handler: slowStream, kind: record.ErrNone, status: 200, events: 3,
			opts: func(o *OpenAIOptions) { o.TTFTTimeout = 100 * time.Millisecond }},
		// 429 has its own kind; the server's message is kept.
		{name: "http 429", handler: errorReply(429, `{"error":{"message":"rate limited","type":"rate_limit"}}`),
			kind: record.ErrHTTP429, status: 429, msg: "HTTP 429: rate limited"},
		// Other 4xx: vLLM's error body.
		{name: "http 400", handler: errorReply(400, `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`),
			kind: record.ErrHTTP4xx, status: 400, msg: "max_tokens is too large"},
		// A 401 that echoes the key: redacted.
		{name: "http 401 echoing the key", handler: echoAuth, kind: record.ErrHTTP4xx, status: 401, msg: "[redacted]"},
		// 5xx with a huge plain-text body: truncated, control characters gone.
		{name: "http 503", handler: errorReply(503, "overloaded\n\t"+strings.Repeat("x", 20000)),
			kind: record.ErrHTTP5xx, status: 503, msg: "HTTP 503: overloaded xxx"},
		// FastAPI's {"detail": ...} shape.
		{name: "http 422 detail", handler: errorReply(422, `{"detail":"field required"}`),
			kind: record.ErrHTTP4xx, status: 422, msg: "field required"},
		// The stream just stops: no [DONE].
		{name: "stream incomplete", handler: streamOf(chatToken("a"), chatToken("b")), kind: record.ErrStreamIncomplete,
			status: 200, msg: "without [DONE] after 2 content events", events: 2},
		// A server that ignores stream:true: told apart by its Content-Type.
		{name: "not streamed", handler: errorReply(200, `{"choices":[{"message":{"content":"x"}}]}`),
			kind: record.ErrStreamIncomplete, status: 200, msg: "did not stream"},
		// Bad JSON in an event.
		{name: "malformed event", handler: streamOf(chatToken("a"), `{"choices":[{"delta":`, "[DONE]"),
			kind: record.ErrMalformedEvent, status: 200, msg: "after 1 content events", events: 1},
		// An event over the size limit.
		{name: "event too large", handler: hugeEvent, kind: record.ErrMalformedEvent, status: 200, msg: "size limit"},
		// data: {"error": ...} inside a 200 stream is a failure, never a success.
		{name: "error event data", handler: streamOf(chatToken("a"), `{"error":{"message":"CUDA out of memory","code":500}}`, "[DONE]"),
			kind: record.ErrStreamErrorEvent, status: 200, msg: "CUDA out of memory", events: 1},
		// event: error is a failure too.
		{name: "error event type", handler: rawStream("data: " + chatToken("a") + "\n\nevent: error\ndata: overloaded\n\ndata: [DONE]\n\n"),
			kind: record.ErrStreamErrorEvent, status: 200, msg: "overloaded", events: 1},
		// llama.cpp's too-long streamed prompt: HTTP 200, an "error:" field with code 400 and no content.
		// A 4xx code in the stream is a rejection, the same kind as an HTTP 400 reply.
		{name: "llama.cpp error 400 in stream", handler: rawStream(`error: {"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4201,"n_ctx":4096}` + "\n\n"),
			kind: record.ErrHTTP4xx, status: 200, msg: "code 400 in a 200 reply: the request exceeds the available context size"},
		// vLLM's shape: data: {"error": {..., "code": 400}}.
		{name: "vllm error 400 in stream", handler: streamOf(`{"error":{"object":"error","message":"prompt too long","type":"BadRequestError","code":400}}`, "[DONE]"),
			kind: record.ErrHTTP4xx, status: 200, msg: "code 400 in a 200 reply: prompt too long"},
		// A 429 code in the stream is a rate limit.
		{name: "error 429 in stream", handler: streamOf(`{"error":{"message":"slow down","code":429}}`, "[DONE]"),
			kind: record.ErrHTTP429, status: 200, msg: "code 429 in a 200 reply: slow down"},
		// OpenAI's string codes name no status: still a stream error event.
		{name: "string code in stream", handler: streamOf(`{"error":{"message":"bad","code":"context_length_exceeded"}}`, "[DONE]"),
			kind: record.ErrStreamErrorEvent, status: 200, msg: "error event: bad"},
		// A non-streaming 200 whose error carries a 4xx code.
		{name: "error 400 in plain reply", plain: true, handler: errorReply(200, `{"error":{"message":"too long","code":400}}`),
			kind: record.ErrHTTP4xx, status: 200, msg: "code 400 in a 200 reply: too long"},
		// A finished stream with no content at all.
		{name: "empty output", handler: streamOf(roleChunk, usageChunk, "[DONE]"), kind: record.ErrEmptyOutput, status: 200, msg: "no content"},
		// A non-streaming reply with empty content.
		{name: "empty output plain", plain: true, handler: errorReply(200, `{"choices":[{"message":{"content":""},"finish_reason":"stop"}]}`),
			kind: record.ErrEmptyOutput, status: 200, msg: "finish_reason stop"},
		// A non-streaming reply that is not JSON.
		{name: "malformed plain", plain: true, handler: errorReply(200, `{"choices":`), kind: record.ErrMalformedEvent, status: 200, msg: "reply body"},
		// A non-streaming 200 carrying an error object.
		{name: "error in plain reply", plain: true, handler: errorReply(200, `{"error":"model overloaded"}`),
			kind: record.ErrStreamErrorEvent, status: 200, msg: "model overloaded"},
		// A stream that never ends, far past max_tokens 16: cut off after record.OverrunLimit(16) = 96 events.
		{name: "endless stream past max_tokens", handler: endlessHandler, kind: record.ErrOutputOverrun, status: 200,
			msg: "past 96 content events (max_tokens 16)", events: 97},
		// A gzip-compressed stream the client never asked for: the encoding is named, not "0 content events".
		{name: "unasked gzip", handler: gzipStream, kind: record.ErrMalformedEvent, status: 200, msg: `Content-Encoding "gzip"`},
		// A redirect is not followed, and says where it pointed (without its query).
		{name: "redirect", handler: redirectTo("http://other.example:8000/v1/chat/completions?token=abc"), kind: record.ErrOther,
			status: 301, msg: "redirect to http://other.example:8000/v1/chat/completions not followed"},
		// An HTTP/1.0 reply whose body ends when the connection closes: a stream like any other.
		{name: "http/1.0 body", handler: rawReply("HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: " + chatToken("a") + "\n\ndata: [DONE]\n\n"),
			kind: record.ErrNone, status: 200, events: 1},
		// Response headers past net/http's 1 MiB limit: the server's fault, named.
		{name: "giant headers", handler: rawReply("HTTP/1.1 200 OK\r\nX-Pad: " + strings.Repeat("x", 2<<20) + "\r\n\r\n"),
			kind: record.ErrHTTPProtocol, msg: "headers exceeded"},
		// A flood of 1xx informational replies before the real one: bounded by net/http, named.
		{name: "1xx flood", handler: rawReply(strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n", 5000) + "HTTP/1.1 200 OK\r\n\r\n"),
			kind: record.ErrHTTPProtocol, msg: "headers exceeded"},
		// A few 1xx replies before a good stream are harmless.
		{name: "1xx then stream", handler: rawReply(strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n", 3) +
			"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: " + chatToken("a") + "\n\ndata: [DONE]\n\n"),
			kind: record.ErrNone, status: 200, events: 1},
		// A non-streamed reply of exactly 64 MiB, the cap for one reply: read whole, a success.
		{name: "reply at the cap", plain: true, handler: sizedReply(maxBody), kind: record.ErrNone, status: 200, events: 1},
		// One byte more: reply_too_large, not read further (the cap used to be 128 MiB in fact).
		{name: "reply over the cap", plain: true, handler: sizedReply(maxBody + 1), kind: record.ErrReplyTooLarge, status: 200,
			msg: "longer than 64 MiB"},
		// The caller cancels mid-stream.
		{name: "canceled", handler: stallAfterSignal(chatToken("a"), canceled), cancel: canceled,
			kind: record.ErrCanceled, status: anyStatus, msg: "canceled", events: anyEvents},
	}
}

func refusedTarget(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

// fullBacklogTarget listens with a backlog of 0 and fills it with one
// connection: Linux then drops further SYNs, so connecting times out.
func fullBacklogTarget(t *testing.T) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	filler, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatalf("filling the backlog: %v", err)
	}
	t.Cleanup(func() { filler.Close() })
	return "http://" + addr + "/v1"
}

func plainAsTLSTarget(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "http://", "https://", 1) + "/v1"
}

// discardLog silences the TLS server's handshake-error log lines, which
// the tests provoke on purpose.
var discardLog = log.New(io.Discard, "", 0)

func tlsTarget(t *testing.T) string {
	srv := httptest.NewTLSServer(streamOf(chatToken("a"), "[DONE]"))
	srv.Config.ErrorLog = discardLog
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// hijack consumes the request and takes over the raw connection.
func hijack(w http.ResponseWriter, r *http.Request) (net.Conn, *bufio.ReadWriter) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, rw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	return conn, rw
}

// resetHandler writes prefix as the start of a chunked SSE reply (nothing
// when empty) and then resets the connection.
func resetHandler(prefix string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, rw := hijack(w, r)
		if prefix != "" {
			fmt.Fprintf(rw, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(prefix), prefix)
			rw.Flush()
		}
		conn.(*net.TCPConn).SetLinger(0) // close with RST
		conn.Close()
	}
}

// truncatedHandler sends two events of a chunked reply, then closes
// cleanly in the middle of the body.
func truncatedHandler(w http.ResponseWriter, r *http.Request) {
	conn, rw := hijack(w, r)
	body := "data: " + chatToken("a") + "\n\ndata: " + chatToken("b") + "\n\n"
	fmt.Fprintf(rw, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(body), body)
	rw.Flush()
	conn.Close()
}

func closeHandler(w http.ResponseWriter, r *http.Request) {
	conn, _ := hijack(w, r)
	conn.Close()
}

// stallAfter sends one event and then waits for the client to go away.
func stallAfter(event string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		startStream(w, r)
		sendEvent(w, event)
		waitGone(r)
	}
}

// stallAfterSignal sends one event, tells the test, and waits.
func stallAfterSignal(event string, sent chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		startStream(w, r)
		sendEvent(w, event)
		close(sent)
		waitGone(r)
	}
}

func stallHeaders(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	waitGone(r)
}

// waitGone blocks until the client closes the connection (net/http
// cancels the request's context then, once the body has been read), with
// a cap so that a client bug fails the test instead of hanging it.
func waitGone(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// slowStream takes 3 x 60 ms in all, longer than a 100 ms TTFT timeout,
// but its first token comes at once.
func slowStream(w http.ResponseWriter, r *http.Request) {
	startStream(w, r)
	for i := range 3 {
		sendEvent(w, chatToken(fmt.Sprint(i)))
		time.Sleep(60 * time.Millisecond) // pacing under test
	}
	sendEvent(w, "[DONE]")
}

func errorReply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

func echoAuth(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprintf(w, `{"error":{"message":"invalid key %s"}}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
}

// streamOf sends each string as one data event.
func streamOf(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		startStream(w, r)
		for _, ev := range events {
			sendEvent(w, ev)
		}
	}
}

// rawStream sends a stream body as it is.
func rawStream(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		startStream(w, r)
		fmt.Fprint(w, body)
	}
}

func hugeEvent(w http.ResponseWriter, r *http.Request) {
	startStream(w, r)
	fmt.Fprint(w, "data: ")
	chunk := []byte(strings.Repeat("x", 64<<10))
	for written := 0; written <= DefaultMaxEventSize; written += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return // the client gave up, as it should
		}
	}
}

func TestTLSWithCAFileAndInsecure(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(streamOf(chatToken("a"), "[DONE]"))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts func(*OpenAIOptions)
	}{
		{"CA file", func(o *OpenAIOptions) { o.CAFile = ca }},      // the server's CA is trusted
		{"insecure", func(o *OpenAIOptions) { o.Insecure = true }}, // verification skipped on purpose
	}
	for _, tc := range tests {
		tr := doTrace(t, newClient(t, srv.URL+"/v1", tc.opts), chatRequest(true))
		if tr.Err != record.ErrNone || tr.ContentEvents != 1 {
			t.Errorf("%s: %s %q, %d events; want success with 1 event", tc.name, tr.Err, tr.ErrMsg, tr.ContentEvents)
		}
	}
}

func TestDoRejectsBadRequests(t *testing.T) {
	t.Parallel()
	c := newClient(t, "http://127.0.0.1:1/v1", nil)
	tests := []struct {
		name string
		req  *Request
		msg  string
	}{
		{"nil", nil, "nil request"},                                  // a caller bug is a failure, not a panic
		{"unknown API", &Request{API: "classify"}, `API "classify"`}, // not spoken here
	}
	for _, tc := range tests {
		var tr Trace
		c.Do(context.Background(), tc.req, &tr)
		if tr.Err != record.ErrOther || !strings.Contains(tr.ErrMsg, tc.msg) || !tr.Sent.IsZero() {
			t.Errorf("%s: %s %q (sent %v); want other, message with %q, nothing sent", tc.name, tr.Err, tr.ErrMsg, tr.Sent, tc.msg)
		}
	}
}

func TestSanitize(t *testing.T) {
	t.Parallel()
	c := &OpenAI{redact: record.NewRedactor([]string{testKey})}
	long := strings.Repeat("é", 300)
	tests := []struct {
		name, in, want string
	}{
		{"key redacted", "bad key " + testKey + "!", "bad key [redacted]!"},                 // secrets never reach a record
		{"key altered", "KEY " + strings.ToUpper(testKey), "KEY [redacted]"},                // a gateway that upper-cases what it echoes
		{"key split", "k=" + testKey[:13] + "\n" + testKey[13:], "k=[redacted] [redacted]"}, // cut in two: each piece goes
		{"controls", "a\n\n\tb\x00c\r\n", "a b c"},                                          // one line, no control characters
		{"invalid utf8", "a\xffb", "ab"},                                                    // records are valid UTF-8
		{"truncated on a rune", long, strings.Repeat("é", (maxErrMsg-len("…"))/2) + "…"},    // short, and still valid UTF-8
	}
	for _, tc := range tests {
		if got := c.sanitize(tc.in); got != tc.want {
			t.Errorf("%s: sanitize(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// endlessHandler streams content events until the client goes away.
func endlessHandler(w http.ResponseWriter, r *http.Request) {
	startStream(w, r)
	ev := []byte("data: " + chatToken("a") + "\n\n")
	for r.Context().Err() == nil {
		if _, err := w.Write(ev); err != nil {
			return
		}
	}
}

// TestLongStreamKeepsBoundedOffsets: a stream of MaxEventsKept+1000 events
// without max_tokens succeeds, keeps MaxEventsKept offsets and counts the
// other 1000 (with their gaps) in the tail.
func TestLongStreamKeepsBoundedOffsets(t *testing.T) {
	t.Parallel()
	const n = record.MaxEventsKept + 1000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		startStream(w, r)
		ev := "data: " + chatToken("a") + "\n\n"
		_, _ = io.WriteString(w, strings.Repeat(ev, n)+"data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL+"/v1", nil)
	req := chatRequest(true)
	req.MaxTokens = 0
	tr := doTrace(t, c, req)
	if tr.Err != record.ErrNone || tr.ContentEvents != n {
		t.Fatalf("got %q %q with %d events, want success with %d", tr.Err, tr.ErrMsg, tr.ContentEvents, n)
	}
	if len(tr.EventsUS) != record.MaxEventsKept || tr.Tail.Dropped != 1000 {
		t.Fatalf("kept %d offsets and dropped %d, want %d and 1000", len(tr.EventsUS), tr.Tail.Dropped, record.MaxEventsKept)
	}
	gaps := int64(0)
	for _, g := range tr.Tail.Gaps {
		gaps += g[1]
	}
	if gaps != 1000 || tr.Tail.LastUS < tr.EventsUS[len(tr.EventsUS)-1] {
		t.Fatalf("tail holds %d gaps ending at %d µs, want 1000 ending after the last kept event", gaps, tr.Tail.LastUS)
	}
}

// gzipStream answers a stream compressed with gzip, unasked.
func gzipStream(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Content-Encoding", "gzip")
	zw := gzip.NewWriter(w)
	fmt.Fprintf(zw, "data: %s\n\ndata: [DONE]\n\n", chatToken("a"))
	_ = zw.Close()
}

// redirectTo answers 301 to loc.
func redirectTo(loc string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Location", loc)
		w.WriteHeader(http.StatusMovedPermanently)
	}
}

// TestCanceledMsg: a cancellation says so once, with its cause if it has
// one of its own.
func TestCanceledMsg(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cause error
		want  string
	}{
		{context.Canceled, "canceled"}, // a plain cancel
		{nil, "canceled"},              // no cause at all
		{errors.New("canceled: canceled: run aborted"), "canceled: run aborted"}, // a cause that says it already
		{errors.New("grace over"), "canceled: grace over"},                       // a cause of its own
	} {
		if got := canceledMsg(tt.cause); got != tt.want {
			t.Errorf("canceledMsg(%v) = %q, want %q", tt.cause, got, tt.want)
		}
	}
}

// rawReply writes raw bytes as the whole reply and closes the connection.
func rawReply(raw string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, rw := hijack(w, r)
		_, _ = rw.WriteString(raw)
		_ = rw.Flush()
		conn.Close()
	}
}

// TestLocalResourceErrorsAreTheClients: running out of file descriptors or
// local ports is classified as client_resource (never blamed on the
// target), whatever wraps it.
func TestLocalResourceErrorsAreTheClients(t *testing.T) {
	t.Parallel()
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.EADDRNOTAVAIL} {
		err := fmt.Errorf("Post http://x/v1: %w", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", errno)})
		if kind, msg := classifyNet(err); kind != record.ErrClientResource || !strings.Contains(msg, "not of the target") {
			t.Errorf("%v: got %q %q, want client_resource", errno, kind, msg)
		}
	}
}

// sizedReply answers a whole chat reply of exactly n bytes, its content
// padded with x's.
func sizedReply(n int) http.HandlerFunc {
	const head, tail = `{"choices":[{"message":{"content":"`, `"},"finish_reason":"stop"}]}`
	body := make([]byte, n)
	copy(body, head)
	for i := len(head); i < n-len(tail); i++ {
		body[i] = 'x'
	}
	copy(body[n-len(tail):], tail)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(n))
		w.Write(body)
	}
}
