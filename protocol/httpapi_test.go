package protocol

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// httpReply is one reply of a templated service and what the http API
// must make of it. The replies are written by hand in the shapes such
// services use.
type httpReply struct {
	name        string
	opts        HTTPAPIOptions
	status      int
	contentType string
	body        string
	// want
	err     record.ErrorKind
	msg     string // in ErrMsg
	content int
	tokens  int // -1: no usage
}

var httpReplies = []httpReply{
	// A classifier's JSON: one content event, no token count.
	{name: "json label", opts: HTTPAPIOptions{Text: "label"}, body: `{"label":"positive","score":0.98}`, content: 1, tokens: -1},
	// A JSON reply with a token count and an error member that is null.
	{name: "json tokens", opts: HTTPAPIOptions{Text: "output.text", Tokens: "usage.out", Error: "error"},
		body: `{"output":{"text":"bonjour"},"usage":{"out":3},"error":null}`, content: 1, tokens: 3},
	// An empty text is no output.
	{name: "json empty", opts: HTTPAPIOptions{Text: "label"}, body: `{"label":""}`, err: record.ErrEmptyOutput, tokens: -1},
	// A 200 holding an error is a failure with its message.
	{name: "json error in 200", opts: HTTPAPIOptions{Text: "label", Error: "error.msg"},
		body: `{"error":{"msg":"model overloaded"}}`, err: record.ErrStreamErrorEvent, msg: "model overloaded", tokens: -1},
	// A reply that is not JSON when a path needs it is malformed.
	{name: "json malformed", opts: HTTPAPIOptions{Text: "label"}, body: `{"label":"pos`, err: record.ErrMalformedEvent, msg: "not JSON", tokens: -1},
	// Without paths any non-empty body is the answer, JSON or not.
	{name: "json no paths", body: `ok`, content: 1, tokens: -1},
	// An error status gets the message from the error path.
	{name: "503 error path", opts: HTTPAPIOptions{Error: "detail.reason"}, status: 503,
		body: `{"detail":{"reason":"warming up"}}`, err: record.ErrHTTP5xx, msg: "HTTP 503: warming up", tokens: -1},
	// 429 is its own kind.
	{name: "429", status: 429, body: `{"error":"slow down"}`, err: record.ErrHTTP429, msg: "slow down", tokens: -1},
	// none: the body is read and ignored, the end is the first token.
	{name: "none", opts: HTTPAPIOptions{Response: ResponseNone}, body: `anything`, tokens: -1},
	// An SSE stream: one event a token, the last count kept, [DONE] ends it.
	{name: "sse", opts: HTTPAPIOptions{Response: ResponseSSE, Text: "t", Tokens: "n"}, contentType: "text/event-stream",
		body: "data: {\"t\":\"a\"}\n\ndata: {\"t\":\"b\",\"n\":2}\n\n: keep-alive\n\ndata: {\"t\":\"\",\"n\":3}\n\ndata: [DONE]\n\n", content: 2, tokens: 3},
	// An SSE stream without [DONE] ends at the body's end.
	{name: "sse no done", opts: HTTPAPIOptions{Response: ResponseSSE, Text: "t"}, contentType: "text/event-stream",
		body: "data: {\"t\":\"a\"}\n\ndata: {\"t\":\"b\"}\n\n", content: 2, tokens: -1},
	// An error object mid-stream fails it.
	{name: "sse error", opts: HTTPAPIOptions{Response: ResponseSSE, Text: "t", Error: "err"}, contentType: "text/event-stream",
		body: "data: {\"t\":\"a\"}\n\ndata: {\"err\":\"out of memory\"}\n\n", err: record.ErrStreamErrorEvent, msg: "out of memory", tokens: -1},
	// A malformed event.
	{name: "sse malformed", opts: HTTPAPIOptions{Response: ResponseSSE, Text: "t"}, contentType: "text/event-stream",
		body: "data: {\"t\":\"a\"}\n\ndata: {\"t\":\n\n", err: record.ErrMalformedEvent, tokens: -1},
	// NDJSON: one object a line; a count on the last.
	{name: "ndjson", opts: HTTPAPIOptions{Response: ResponseNDJSON, Text: "delta", Tokens: "total"}, contentType: "application/x-ndjson",
		body: "{\"delta\":\"x\"}\n{\"delta\":\"y\"}\n{\"delta\":\"z\"}\n{\"total\":3}\n", content: 3, tokens: 3},
	// NDJSON with an error line.
	{name: "ndjson error", opts: HTTPAPIOptions{Response: ResponseNDJSON, Text: "delta", Error: "error"}, contentType: "application/x-ndjson",
		body: "{\"delta\":\"x\"}\n{\"error\":\"boom\"}\n", err: record.ErrStreamErrorEvent, msg: "boom", tokens: -1},
	// A stream with no content is empty output.
	{name: "ndjson empty", opts: HTTPAPIOptions{Response: ResponseNDJSON, Text: "delta"}, contentType: "application/x-ndjson",
		body: "{\"delta\":\"\"}\n", err: record.ErrEmptyOutput, tokens: -1},
	// Chunked: opaque text, at least one event.
	{name: "chunked", opts: HTTPAPIOptions{Response: ResponseChunked}, contentType: "text/plain", body: "once upon a time", content: -1, tokens: -1},
}

// TestHTTPAPIReplies reads each reply delivered in one write and in
// 7-byte pieces.
func TestHTTPAPIReplies(t *testing.T) {
	t.Parallel()
	for _, tt := range httpReplies {
		for _, size := range []int{0, 7} {
			t.Run(fmt.Sprintf("%s/pieces=%d", tt.name, size), func(t *testing.T) {
				t.Parallel()
				srv := httptest.NewServer(httpReplyHandler(tt, size))
				defer srv.Close()
				opts := tt.opts
				opts.Path = "/svc"
				c := newClient(t, srv.URL, func(o *OpenAIOptions) { o.HTTP = &opts })
				got := doTrace(t, c, &Request{API: APIHTTP, Body: []byte(`{"q":"hi"}`), MaxTokens: 16})
				if got.Err != tt.err || !strings.Contains(got.ErrMsg, tt.msg) {
					t.Fatalf("%s %q, want %s %q", got.Err, got.ErrMsg, tt.err, tt.msg)
				}
				if tt.err != record.ErrNone {
					return
				}
				switch {
				case tt.content == -1 && got.ContentEvents < 1:
					t.Errorf("%d content events, want at least 1", got.ContentEvents)
				case tt.content >= 0 && got.ContentEvents != tt.content:
					t.Errorf("%d content events, want %d", got.ContentEvents, tt.content)
				}
				if tt.tokens >= 0 != got.UsageReported || tt.tokens >= 0 && got.CompletionTokens != tt.tokens {
					t.Errorf("usage %v %d, want %d", got.UsageReported, got.CompletionTokens, tt.tokens)
				}
				if got.FirstToken.IsZero() {
					t.Error("no first token")
				}
			})
		}
	}
}

// httpReplyHandler serves tt's reply at POST /svc.
func httpReplyHandler(tt httpReply, size int) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /svc", func(w http.ResponseWriter, r *http.Request) {
		if tt.status != 0 {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tt.status)
			_, _ = w.Write([]byte(tt.body))
			return
		}
		ct := tt.contentType
		if ct == "" {
			ct = "application/json"
		}
		serveTranscriptAs([]byte(tt.body), size, ct, nil)(w, r)
	})
	return mux
}

// The method, path and a body carrying the request id reach the server as
// configured; a GET sends no body.
func TestHTTPAPIRequest(t *testing.T) {
	t.Parallel()
	type seen struct{ method, path, body, id string }
	saw := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		saw <- seen{r.Method, r.URL.Path, string(b), r.Header.Get("X-Request-Id")}
		_, _ = w.Write([]byte(`{"ok":"yes"}`))
	}))
	defer srv.Close()
	tmpl, err := ParseTemplate(`{"id":"{{request_id}}","text":"{{prompt}}","n":{{input_tokens}},"class":"{{class}}"}`, EscapeJSON)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := OpenAIBody{Prompt: `say "hi"`, InputTokens: 4, Class: "short", Template: tmpl}.Render(APIHTTP)
	opts := HTTPAPIOptions{Method: "put", Path: "/v1/classify", Text: "ok"}
	c := newClient(t, srv.URL+"/base", func(o *OpenAIOptions) { o.HTTP = &opts })
	req := &Request{API: APIHTTP, Body: body, TraceID: [16]byte{1, 2, 3}}
	if got := doTrace(t, c, req); got.Err != record.ErrNone {
		t.Fatalf("%s %q", got.Err, got.ErrMsg)
	}
	id := hex.EncodeToString(req.TraceID[:])
	want := seen{"PUT", "/base/v1/classify", `{"id":"` + id + `","text":"say \"hi\"","n":4,"class":"short"}`, id}
	if got := <-saw; got != want {
		t.Errorf("server saw %+v\nwant %+v", got, want)
	}

	get := HTTPAPIOptions{Method: "GET", Response: ResponseNone}
	c = newClient(t, srv.URL, func(o *OpenAIOptions) { o.HTTP = &get })
	got := doTrace(t, c, &Request{API: APIHTTP})
	if s := <-saw; got.Err != record.ErrNone || s.method != "GET" || s.body != "" || s.path != "/" {
		t.Errorf("GET: %s %q; server saw %+v", got.Err, got.ErrMsg, s)
	}
}

// Options the client cannot use are refused when it is built, naming
// the field.
func TestHTTPAPIOptionsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		opts HTTPAPIOptions
		want string
	}{
		// DELETE is no way to ask a model.
		{HTTPAPIOptions{Method: "DELETE"}, `method "DELETE"`},
		// An unknown response mode names the known ones.
		{HTTPAPIOptions{Response: "xml"}, "want none, json, sse, ndjson, chunked"},
		// The path is static: a placeholder belongs in the body.
		{HTTPAPIOptions{Path: "/q/{{prompt}}"}, "no placeholders"},
		// A query in the path.
		{HTTPAPIOptions{Path: "/q?x=1"}, "no placeholders, query"},
		// A malformed dot path names its field.
		{HTTPAPIOptions{Text: "a..b"}, "text: extract path"},
		{HTTPAPIOptions{Tokens: ".n"}, "tokens: extract path"},
		{HTTPAPIOptions{Error: "e."}, "error: extract path"},
	}
	for _, tt := range tests {
		opts := tt.opts
		_, err := NewOpenAI(OpenAIOptions{BaseURL: "http://127.0.0.1:1", HTTP: &opts})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.opts, err, tt.want)
		}
	}
}
