package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/inferload/inferload/record"
)

// testKey is the API key every test client sends; no ErrMsg may contain it.
const testKey = "sk-test-SECRET-7f3a9c1e"

const roleChunk = `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`

func chatToken(s string) string {
	return `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"` + s + `"},"finish_reason":null}]}`
}

const usageChunk = `{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`

// startStream sends the SSE response headers.
func startStream(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// sendEvent writes one data event and flushes it onto the wire.
func sendEvent(w http.ResponseWriter, data string) {
	fmt.Fprintf(w, "data: %s\n\n", data)
	w.(http.Flusher).Flush()
}

// newClient builds a client for base with the test key; mod adjusts the
// options.
func newClient(t testing.TB, base string, mod func(*OpenAIOptions)) *OpenAI {
	t.Helper()
	opts := OpenAIOptions{BaseURL: base, APIKey: testKey, ConnectTimeout: 2 * time.Second}
	if mod != nil {
		mod(&opts)
	}
	c, err := NewOpenAI(opts)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// chatRequest is a small streaming chat request.
func chatRequest(stream bool) *Request {
	body, _ := OpenAIBody{Model: "m", Prompt: "hi", MaxTokens: 16, Stream: stream, IncludeUsage: true}.Render(APIChat)
	return &Request{API: APIChat, Body: body, Stream: stream, MaxTokens: 16, EventsCap: 16}
}

// doTrace runs one request under a generous test deadline so that a bug
// fails the test instead of hanging it.
func doTrace(t testing.TB, c *OpenAI, req *Request) *Trace {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var tr Trace
	c.Do(ctx, req, &tr)
	if ctx.Err() != nil {
		t.Fatalf("request ran into the test deadline: %+v", tr)
	}
	checkTrace(t, &tr)
	return &tr
}

// checkTrace asserts what must hold for every trace.
func checkTrace(t testing.TB, tr *Trace) {
	t.Helper()
	if strings.Contains(tr.ErrMsg, testKey) || strings.Contains(tr.ErrMsg, testKey[:12]) {
		t.Errorf("ErrMsg leaks the API key: %q", tr.ErrMsg)
	}
	if len(tr.ErrMsg) > maxErrMsg {
		t.Errorf("ErrMsg is %d bytes, want <= %d", len(tr.ErrMsg), maxErrMsg)
	}
	if (tr.Err == record.ErrNone) != (tr.ErrMsg == "") {
		t.Errorf("Err %q with ErrMsg %q: both or neither", tr.Err, tr.ErrMsg)
	}
	if tr.Start.IsZero() || tr.End.Before(tr.Start) {
		t.Errorf("Start %v, End %v: End must follow Start", tr.Start, tr.End)
	}
	if len(tr.EventsUS)+tr.Tail.Dropped != tr.ContentEvents {
		t.Errorf("%d event offsets for %d content events", len(tr.EventsUS), tr.ContentEvents)
	}
}

// timingAttempts: the timing tests compare the client's stamps with the
// server's on a 2-core machine shared with other builds, where a goroutine
// may wait many milliseconds for a CPU. Scheduling noise only ever makes
// one attempt late; a measurement bug (stamping after parsing, or at the
// end of the stream) fails every attempt. So the best of a few attempts
// must be within tolerance, and causality must hold in all of them.
const timingAttempts = 3

// timingTolerance is how far after the server's send a client stamp may be.
const timingTolerance = 3 * time.Millisecond

// timingCheck collects tolerance violations of one attempt.
type timingCheck struct {
	t      *testing.T
	misses []string
}

// within checks one client measurement against the server's truth. A
// client stamp before the server's send is a bug, never noise.
func (c *timingCheck) within(what string, client, server time.Duration) {
	d := client - server
	if d < 0 {
		c.t.Errorf("%s: client saw %v, before the server sent it at %v", what, client, server)
	}
	if d > timingTolerance {
		c.misses = append(c.misses, fmt.Sprintf("%s: client %v, server %v: %v late (tolerance %v)",
			what, client, server, d, timingTolerance))
	}
}

// near checks a client-measured interval against the server's, either way.
func (c *timingCheck) near(what string, client, server time.Duration) {
	if d := client - server; d < -timingTolerance || d > timingTolerance {
		c.misses = append(c.misses, fmt.Sprintf("%s: client %v, server %v (tolerance ±%v)",
			what, client, server, timingTolerance))
	}
}

// bestOf runs attempt until one has no misses, and fails with the last
// attempt's misses otherwise.
func bestOf(t *testing.T, attempt func(c *timingCheck)) {
	var misses []string
	for range timingAttempts {
		c := &timingCheck{t: t}
		attempt(c)
		if len(c.misses) == 0 || t.Failed() {
			return
		}
		misses = c.misses
	}
	t.Errorf("%d attempts out of tolerance; last one:\n%s", timingAttempts, strings.Join(misses, "\n"))
}

// pacedServer streams tokens after firstDelay, gap apart, and hands the
// instants it sent each token and [DONE] (taken before each write, so the
// client can never legitimately see a byte earlier) to the returned channel.
func pacedServer(t *testing.T, tokens int, firstDelay, gap time.Duration) (*httptest.Server, <-chan []time.Time) {
	stamps := make(chan []time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		startStream(w, r)
		sendEvent(w, roleChunk)
		var sent []time.Time
		time.Sleep(firstDelay) // the behaviour under test: a paced server, not synchronisation
		for i := range tokens {
			if i > 0 {
				time.Sleep(gap)
			}
			sent = append(sent, time.Now())
			sendEvent(w, chatToken(fmt.Sprint("t", i)))
		}
		sendEvent(w, usageChunk)
		sent = append(sent, time.Now())
		sendEvent(w, "[DONE]")
		stamps <- sent
	}))
	t.Cleanup(srv.Close)
	return srv, stamps
}

func TestStreamTimingMatchesServer(t *testing.T) {
	t.Parallel()
	const tokens = 20
	const firstDelay, gap = 30 * time.Millisecond, 4 * time.Millisecond
	srv, stamps := pacedServer(t, tokens, firstDelay, gap)
	c := newClient(t, srv.URL+"/v1", nil)
	bestOf(t, func(ck *timingCheck) {
		tr := doTrace(t, c, chatRequest(true))
		sent := <-stamps
		if tr.Err != record.ErrNone || tr.ContentEvents != tokens || !tr.SawDone {
			t.Fatalf("trace %+v, want %d content events and [DONE]", tr, tokens)
		}
		ck.within("TTFT", tr.FirstToken.Sub(tr.Sent), sent[0].Sub(tr.Sent))
		for i, us := range tr.EventsUS {
			ck.within(fmt.Sprint("event ", i), time.Duration(us)*time.Microsecond, sent[i].Sub(tr.Sent).Truncate(time.Microsecond))
			if i > 0 { // ITL: the gap seen vs the gap sent
				itl := time.Duration(us-tr.EventsUS[i-1]) * time.Microsecond
				ck.near(fmt.Sprint("ITL ", i), itl, sent[i].Sub(sent[i-1]))
			}
		}
		ck.within("E2E", tr.End.Sub(tr.Sent), sent[tokens].Sub(tr.Sent))
		if got := tr.FirstToken.Sub(tr.Sent); got < firstDelay {
			t.Errorf("TTFT %v is shorter than the server's delay %v", got, firstDelay)
		}
		if !tr.UsageReported || tr.PromptTokens != 7 || tr.CompletionTokens != 3 {
			t.Errorf("usage %v %d/%d, want 7/3", tr.UsageReported, tr.PromptTokens, tr.CompletionTokens)
		}
	})
}

func TestNonStreamingTimingMatchesServer(t *testing.T) {
	t.Parallel()
	const delay = 25 * time.Millisecond
	stamp := make(chan time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(delay) // the server's generation time
		w.Header().Set("Content-Type", "application/json")
		stamp <- time.Now()
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there"},`+
			`"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL+"/v1", nil)
	bestOf(t, func(ck *timingCheck) {
		tr := doTrace(t, c, chatRequest(false))
		sent := <-stamp
		if tr.Err != record.ErrNone || tr.ContentEvents != 1 || tr.FinishReason != "stop" || tr.CompletionTokens != 2 {
			t.Fatalf("trace %+v, want one content event, finish stop, 2 completion tokens", tr)
		}
		ck.within("reply", tr.FirstToken.Sub(tr.Sent), sent.Sub(tr.Sent))
		if !tr.End.Equal(tr.FirstToken) || tr.EventsUS[0] != tr.FirstToken.Sub(tr.Sent).Microseconds() {
			t.Errorf("End %v, FirstToken %v, EventsUS %v: a whole reply is one event at its end", tr.End, tr.FirstToken, tr.EventsUS)
		}
		if tr.FirstToken.Sub(tr.Sent) < delay {
			t.Errorf("latency %v below the server's delay %v", tr.FirstToken.Sub(tr.Sent), delay)
		}
	})
}

// seenRequest is what the server received.
type seenRequest struct {
	Path   string
	Header http.Header
	Body   map[string]any
}

func recordingServer(t *testing.T, reply func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, <-chan seenRequest) {
	seen := make(chan seenRequest, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		seen <- seenRequest{r.URL.Path, r.Header.Clone(), body}
		reply(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, seen
}

// wholeReplyTrace sends body to a server that answers with status and the
// whole JSON reply, and returns the trace and what the server received.
func wholeReplyTrace(t *testing.T, status int, reply string, req *Request) (*Trace, seenRequest) {
	t.Helper()
	srv, seen := recordingServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(reply))
	})
	tr := doTrace(t, newClient(t, srv.URL+"/v1", nil), req)
	return tr, <-seen
}

// checkNoTokens checks a successful reply of an API without tokens
// (embeddings, images): its arrival is both the first token and the end,
// and no content event is counted.
func checkNoTokens(t *testing.T, tr *Trace) {
	t.Helper()
	if tr.Err == record.ErrNone && (tr.FirstToken != tr.End || tr.ContentEvents != 0) {
		t.Errorf("success: first token %v, end %v, %d content events; want first = end, none", tr.FirstToken, tr.End, tr.ContentEvents)
	}
}

func TestRequestCarriesAuthHeadersAndExtraFields(t *testing.T) {
	t.Parallel()
	srv, seen := recordingServer(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w, r)
		sendEvent(w, `{"choices":[{"text":"a","index":0}]}`)
		sendEvent(w, "[DONE]")
	})
	c := newClient(t, srv.URL+"/v1/", func(o *OpenAIOptions) {
		o.Headers = map[string]string{"X-Tenant": "blue", "user-agent": "bench/1"}
	})
	body, err := OpenAIBody{Model: "m", Prompt: "p", MaxTokens: 8, Stream: true, IgnoreEOS: true,
		Extra: map[string]any{"temperature": 0.5, "min_tokens": 8}}.Render(APICompletions)
	if err != nil {
		t.Fatal(err)
	}
	tr := doTrace(t, c, &Request{API: APICompletions, Body: body, Stream: true})
	got := <-seen
	if tr.Err != record.ErrNone {
		t.Fatalf("request failed: %s %s", tr.Err, tr.ErrMsg)
	}
	checks := []struct{ what, got, want string }{
		{"path (trailing slash in BaseURL tolerated)", got.Path, "/v1/completions"},
		{"Authorization", got.Header.Get("Authorization"), "Bearer " + testKey},
		{"custom header", got.Header.Get("X-Tenant"), "blue"},
		{"overridden User-Agent", got.Header.Get("User-Agent"), "bench/1"},
		{"Accept", got.Header.Get("Accept"), "text/event-stream"},
		{"Content-Type", got.Header.Get("Content-Type"), "application/json"},
		{"no compression asked", got.Header.Get("Accept-Encoding"), ""},
		{"idempotency marker not sent", got.Header.Get("X-Idempotency-Key"), ""},
		{"temperature", fmt.Sprint(got.Body["temperature"]), "0.5"},
		{"min_tokens", fmt.Sprint(got.Body["min_tokens"]), "8"},
		{"ignore_eos", fmt.Sprint(got.Body["ignore_eos"]), "true"},
		{"prompt", fmt.Sprint(got.Body["prompt"]), "p"},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s: got %q, want %q", ck.what, ck.got, ck.want)
		}
	}
	if tr.BytesOut != int64(len(body)) || tr.BytesIn == 0 {
		t.Errorf("BytesOut %d (want %d), BytesIn %d (want > 0)", tr.BytesOut, len(body), tr.BytesIn)
	}
}

func TestNoAuthorizationWithoutKey(t *testing.T) {
	t.Parallel()
	srv, seen := recordingServer(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"choices":[{"message":{"content":"x"}}]}`)
	})
	c := newClient(t, srv.URL+"/v1", func(o *OpenAIOptions) { o.APIKey = "" })
	if tr := doTrace(t, c, chatRequest(false)); tr.Err != record.ErrNone {
		t.Fatalf("request failed: %s %s", tr.Err, tr.ErrMsg)
	}
	got := <-seen
	if _, ok := got.Header["Authorization"]; ok || got.Path != "/v1/chat/completions" {
		t.Errorf("path %q, Authorization %q: want /v1/chat/completions and no header", got.Path, got.Header.Get("Authorization"))
	}
}

func TestStreamsReuseConnections(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		startStream(w, r)
		sendEvent(w, chatToken("a"))
		sendEvent(w, "[DONE]")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := newClient(t, srv.URL+"/v1", nil)
	for range 5 {
		if tr := doTrace(t, c, chatRequest(true)); tr.Err != record.ErrNone {
			t.Fatalf("request failed: %s %s", tr.Err, tr.ErrMsg)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("5 sequential streams opened %d connections, want 1 (the body must be read to its end)", n)
	}
}

func TestNewOpenAIValidates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts OpenAIOptions
		want string // substring of the error
	}{
		{"empty URL", OpenAIOptions{}, "base URL is empty"},                                                                             // nothing to connect to
		{"bad scheme", OpenAIOptions{BaseURL: "ftp://127.0.0.1/v1"}, "scheme must be http or https"},                                    // only HTTP(S)
		{"no host", OpenAIOptions{BaseURL: "http:///v1"}, "no host"},                                                                    // host required
		{"query", OpenAIOptions{BaseURL: "http://127.0.0.1/v1?x=1"}, "query or fragment"},                                               // endpoints are appended
		{"unparsable", OpenAIOptions{BaseURL: "http://127.0.0.1:port/"}, "base URL"},                                                    // url.Parse fails
		{"negative TTFT", OpenAIOptions{BaseURL: "http://127.0.0.1/v1", TTFTTimeout: -1}, "TTFT timeout"},                               // durations >= 0
		{"negative conns", OpenAIOptions{BaseURL: "http://127.0.0.1/v1", MaxConns: -1}, "max connections"},                              // caps >= 0
		{"missing CA", OpenAIOptions{BaseURL: "https://127.0.0.1/v1", CAFile: filepath.Join(dir, "no.pem")}, "CA file"},                 // unreadable file
		{"CA not PEM", OpenAIOptions{BaseURL: "https://127.0.0.1/v1", CAFile: notPEM}, "no PEM certificate"},                            // file without certificates
		{"header name", OpenAIOptions{BaseURL: "http://127.0.0.1/v1", Headers: map[string]string{"X Bad": "1"}}, `header name "X Bad"`}, // not a token
		{"header value", OpenAIOptions{BaseURL: "http://127.0.0.1/v1", Headers: map[string]string{"X-A": "1\r\nX-B: 2"}}, "line break"}, // header injection
		{"key with newline", OpenAIOptions{BaseURL: "http://127.0.0.1/v1", APIKey: "sk\nx"}, "API key"},                                 // header injection
	}
	for _, tc := range tests {
		_, err := NewOpenAI(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if err != nil && tc.opts.APIKey != "" && strings.Contains(err.Error(), tc.opts.APIKey) {
			t.Errorf("%s: error leaks the API key", tc.name)
		}
	}
}

func TestRenderBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body OpenAIBody
		api  API
		want string
	}{
		// Chat: one user message; usage asked only when streaming.
		{"chat stream", OpenAIBody{Model: "m", Prompt: "hi <b>", MaxTokens: 4, Stream: true, IncludeUsage: true}, APIChat,
			`{"max_tokens":4,"messages":[{"role":"user","content":"hi <b>"}],"model":"m","stream":true,"stream_options":{"include_usage":true}}`},
		// Non-streaming: no stream_options even if IncludeUsage is set.
		{"chat plain", OpenAIBody{Model: "m", Prompt: "hi", IncludeUsage: true}, APIChat,
			`{"messages":[{"role":"user","content":"hi"}],"model":"m","stream":false}`},
		// Completions: prompt field; ignore_eos only when asked.
		{"completions", OpenAIBody{Prompt: "p", MaxTokens: 2, IgnoreEOS: true}, APICompletions,
			`{"ignore_eos":true,"max_tokens":2,"prompt":"p","stream":false}`},
		// Extra fields are merged and may override.
		{"extra", OpenAIBody{Model: "m", Prompt: "p", MaxTokens: 2, Extra: map[string]any{"max_tokens": 9, "top_p": 0.9}}, APICompletions,
			`{"max_tokens":9,"model":"m","prompt":"p","stream":false,"top_p":0.9}`},
	}
	for _, tc := range tests {
		got, err := tc.body.Render(tc.api)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if _, err := (OpenAIBody{}).Render("classify"); err == nil || !strings.Contains(err.Error(), "unknown API") {
		t.Errorf("unknown API: error %v", err)
	}
	if _, err := (OpenAIBody{Extra: map[string]any{"f": func() {}}}).Render(APIChat); err == nil {
		t.Error("an Extra value JSON cannot encode was accepted")
	}
}

// A whole conversation replaces the single user message on the chat API;
// the completions API still sends the prompt alone.
func TestRenderConversation(t *testing.T) {
	t.Parallel()
	b := OpenAIBody{Prompt: "and now?", Messages: []ChatMessage{
		{Role: "system", Content: "be brief"}, {Role: "user", Content: "and now?"},
	}}
	chat, err := b.Render(APIChat)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"and now?"}],"stream":false}`; string(chat) != want {
		t.Errorf("chat body %s, want %s", chat, want)
	}
	comp, err := b.Render(APICompletions)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"prompt":"and now?","stream":false}`; string(comp) != want {
		t.Errorf("completions body %s, want %s", comp, want)
	}
}

// TestHangAfterDoneDoesNotHoldTheUser: a server that sends [DONE] and
// then holds the connection open for 5 s (never ending the chunked body)
// must not hold each request: 5 requests one after another, as a
// closed-loop user sends them, all succeed and take far less than one
// hang, let alone five (before: a second each, the drain's old bound).
func TestHangAfterDoneDoesNotHoldTheUser(t *testing.T) {
	t.Parallel()
	const hang = 5 * time.Second
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		startStream(w, r)
		sendEvent(w, chatToken("a"))
		sendEvent(w, "[DONE]")
		select { // the body's end never comes while the client stays
		case <-r.Context().Done():
		case <-time.After(hang):
		}
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL+"/v1", nil)
	start := time.Now()
	for i := range 5 {
		var tr Trace
		c.Do(context.Background(), chatRequest(true), &tr)
		if tr.Err != record.ErrNone || !tr.SawDone || tr.ContentEvents != 1 {
			t.Fatalf("request %d: %q %q, done %v, %d events; want a success", i, tr.Err, tr.ErrMsg, tr.SawDone, tr.ContentEvents)
		}
	}
	if took := time.Since(start); took > hang/2 {
		t.Fatalf("5 requests took %v against a server hanging %v after [DONE]: the user was held", took, hang)
	}
}
