package protocol

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// TestExtractText covers the extraction paths a retrieval step uses.
func TestExtractText(t *testing.T) {
	t.Parallel()
	body := []byte(`{"results":[{"text":"alpha","score":0.9},{"text":"beta","score":0.5}],` +
		`"meta":{"b":2,"a":"x"},"n":3}`)
	tests := []struct {
		path, want string
		wantErr    bool
	}{
		// An empty path takes the whole body.
		{"", string(body), false},
		// A wildcard over an array joins every match with a blank line.
		{"results.*.text", "alpha\n\nbeta", false},
		// A numeric part indexes an array.
		{"results.1.text", "beta", false},
		// A non-string value is taken as its JSON text.
		{"results.0.score", "0.9", false},
		// A wildcard over an object visits keys in sorted order.
		{"meta.*", "x\n\n2", false},
		// A path that matches nothing is an error, not silent empty context.
		{"results.*.missing", "", true},
		// An index out of range matches nothing.
		{"results.7.text", "", true},
		// An empty part is a malformed path.
		{"results..text", "", true},
	}
	for _, tt := range tests {
		got, err := ExtractText(body, tt.path)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ExtractText(%q) = %q, %v; want %q, error %v", tt.path, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := ExtractText([]byte("not json"), "a"); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("non-JSON reply: %v", err)
	}
}

// retrievalServer answers /search with the query it got back as a result,
// /fail with a 503, /missing with a 404 and /slow only when the client
// gives up.
func retrievalServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /search", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get("X-Key") != "k1" || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, `{"error":"bad headers"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"results":[{"text":"ctx one"},{"text":` + string(b) + `}]}`))
	})
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("q=" + r.URL.Query().Get("q")))
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"index unavailable"}}`, http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestHTTPCall sends templated calls to a real server: the prompt is
// escaped for the URL and for a JSON body, the reply's text is extracted,
// and failures land in the error taxonomy.
func TestHTTPCall(t *testing.T) {
	t.Parallel()
	srv := retrievalServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/x"
	ln.Close()
	prompt := `say "hi" & <go>`
	tests := []struct {
		name       string
		opts       HTTPCallOptions
		want       string
		wantErr    record.ErrorKind
		wantStatus int
	}{
		// A JSON body template gets the prompt JSON-escaped, headers are
		// sent, and the whole reply's matches are joined.
		{"post json", HTTPCallOptions{URL: srv.URL + "/search", Body: `{"q":"{{prompt}}"}`,
			Headers: map[string]string{"X-Key": "k1"}, Extract: "results.*.text"},
			"ctx one\n\n{\"q\":\"say \\\"hi\\\" & <go>\"}", "", 200},
		// A GET gets the prompt query-escaped into the URL; no extract
		// takes the whole body.
		{"get query", HTTPCallOptions{URL: srv.URL + "/search?q={{prompt}}"}, "q=" + prompt, "", 200},
		// A 503 is an http_5xx failure with the server's message.
		{"server error", HTTPCallOptions{URL: srv.URL + "/fail"}, "", record.ErrHTTP5xx, 503},
		// A 4xx reply (wrong headers) is an http_4xx failure.
		{"client error", HTTPCallOptions{URL: srv.URL + "/search", Body: `{}`, Method: "post"}, "", record.ErrHTTP4xx, 401},
		// An extract path the reply lacks is a malformed reply.
		{"bad extract", HTTPCallOptions{URL: srv.URL + "/search?q=x", Extract: "results"}, "", record.ErrMalformedEvent, 200},
		// No reply within the timeout is a timeout before the first token.
		{"timeout", HTTPCallOptions{URL: srv.URL + "/slow", Timeout: 50 * time.Millisecond}, "", record.ErrTimeoutBeforeTTFT, 0},
		// Nobody listening is connection_refused.
		{"refused", HTTPCallOptions{URL: refused}, "", record.ErrConnRefused, 0},
	}
	for _, tt := range tests {
		call, err := NewHTTPCall(tt.opts)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var tr Trace
		got := call.Do(context.Background(), TemplateFields{Prompt: prompt}, [16]byte{}, 0, &tr)
		call.Close()
		if got != tt.want || tr.Err != tt.wantErr || tr.Status != tt.wantStatus {
			t.Errorf("%s: got %q err %q (%s) status %d; want %q err %q status %d",
				tt.name, got, tr.Err, tr.ErrMsg, tr.Status, tt.want, tt.wantErr, tt.wantStatus)
		}
		if tr.Start.IsZero() || tr.End.Before(tr.Start) {
			t.Errorf("%s: start %v end %v", tt.name, tr.Start, tr.End)
		}
		if tt.wantErr == record.ErrHTTP5xx && !strings.Contains(tr.ErrMsg, "index unavailable") {
			t.Errorf("%s: message %q lacks the server's", tt.name, tr.ErrMsg)
		}
	}
}

// TestNewHTTPCallRejects: bad options fail at startup, naming the problem.
func TestNewHTTPCallRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		opts HTTPCallOptions
		want string
	}{
		// A relative URL cannot be sent.
		{HTTPCallOptions{URL: "/search"}, "absolute"},
		// Only http and https are spoken.
		{HTTPCallOptions{URL: "ftp://127.0.0.1/x"}, "absolute"},
		// A negative timeout is a mistake.
		{HTTPCallOptions{URL: "http://127.0.0.1/x", Timeout: -1}, "negative"},
		// A malformed extract path.
		{HTTPCallOptions{URL: "http://127.0.0.1/x", Extract: "a..b"}, "empty part"},
		// A header net/http would refuse.
		{HTTPCallOptions{URL: "http://127.0.0.1/x", Headers: map[string]string{"X": "a\nb"}}, "header"},
	}
	for _, tt := range tests {
		if _, err := NewHTTPCall(tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.opts, err, tt.want)
		}
	}
}

// TestWithBaseURL: a rebased client reaches the other server's endpoints
// with the original's API key.
func TestWithBaseURL(t *testing.T) {
	t.Parallel()
	auth := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth <- r.URL.Path + " " + r.Header.Get("Authorization")
		_, _ = w.Write([]byte(`{"data":[{"embedding":[0.1]}],"usage":{"prompt_tokens":3}}`))
	}))
	t.Cleanup(srv.Close)
	c, err := NewOpenAI(OpenAIOptions{BaseURL: "http://127.0.0.1:1/v1", APIKey: "sk-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o, err := c.WithBaseURL(srv.URL + "/v1")
	if err != nil {
		t.Fatal(err)
	}
	var tr Trace
	o.Do(context.Background(), &Request{API: APIEmbeddings, Body: []byte(`{"input":"x"}`)}, &tr)
	if got := <-auth; tr.Err != "" || tr.PromptTokens != 3 || got != "/v1/embeddings Bearer sk-1" {
		t.Errorf("err %q %s, tokens %d, server saw %q", tr.Err, tr.ErrMsg, tr.PromptTokens, got)
	}
	if _, err := c.WithBaseURL("not a url"); err == nil {
		t.Error("a bad base URL was accepted")
	}
}

// TestHTTPCallFields: a chain step's templates get the request's class,
// lengths and id, and the id goes out as a model call's does.
func TestHTTPCallFields(t *testing.T) {
	t.Parallel()
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	call, err := NewHTTPCall(HTTPCallOptions{URL: srv.URL + "/r?id={{request_id}}", Method: "POST",
		Body: `{"c":"{{class}}","n":{{input_tokens}},"m":{{max_tokens}},"id":"{{request_id}}"}`})
	if err != nil {
		t.Fatal(err)
	}
	defer call.Close()
	trace := [16]byte{0xab, 15: 0x01}
	var tr Trace
	text := call.Do(context.Background(), TemplateFields{Prompt: "p", Class: "long", InputTokens: 900, MaxTokens: 64}, trace, 1, &tr)
	const id = "ab000000000000000000000000000001"
	if want := `{"c":"long","n":900,"m":64,"id":"` + id + `"}`; text != want {
		t.Errorf("body %s (%s), want %s", text, tr.ErrMsg, want)
	}
	h := <-got
	if h.Get("X-Request-Id") != id || h.Get("Traceparent") != record.TraceParent(trace, 1) {
		t.Errorf("x-request-id %q traceparent %q", h.Get("X-Request-Id"), h.Get("Traceparent"))
	}
}
