package protocol

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// http2Stream serves a chat stream of n tokens, each flushed on its own.
func http2Stream(n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range n {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"t%d\"}}]}\n\n", i)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// startHTTP2 starts srv speaking HTTP/2 as mode asks: h2 over TLS (ALPN)
// or h2c with prior knowledge beside HTTP/1.1.
func startHTTP2(t *testing.T, mode string, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	switch mode {
	case HTTP2TLS:
		srv.EnableHTTP2 = true
		srv.StartTLS()
	case HTTP2Cleartext:
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// TestHTTP2: with either mode, concurrent streams arrive whole over
// HTTP/2, share connections (fewer opened than requests), and are stamped
// on the user-space clock.
func TestHTTP2(t *testing.T) {
	t.Parallel()
	const streams, tokens = 24, 16
	for _, mode := range []string{HTTP2TLS, HTTP2Cleartext} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			srv := startHTTP2(t, mode, http2Stream(tokens))
			c := newClient(t, srv.URL+"/v1", func(o *OpenAIOptions) { o.HTTP2, o.Insecure = mode, true })
			if c.Clock() != ClockUser {
				t.Errorf("Clock() = %q, want %q on HTTP/2", c.Clock(), ClockUser)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			traces := make([]Trace, streams)
			var wg sync.WaitGroup
			for i := range traces {
				wg.Go(func() { c.Do(ctx, chatRequest(true), &traces[i]) })
			}
			wg.Wait()
			opened := 0
			for i, tr := range traces {
				if tr.Err != record.ErrNone || tr.ContentEvents != tokens || tr.Proto != "HTTP/2.0" || tr.Clock != ClockUser {
					t.Fatalf("stream %d: err %q %s, %d events, proto %q, clock %q", i, tr.Err, tr.ErrMsg, tr.ContentEvents, tr.Proto, tr.Clock)
				}
				if tr.NewConn {
					opened++
				}
			}
			if opened < 1 || opened >= streams {
				t.Errorf("%d connections opened for %d concurrent streams; want at least 1 and fewer than the streams", opened, streams)
			}
		})
	}
}

// TestHTTP1OpensAConnectionPerStream is the contrast: HTTP/1.1 opens one
// connection per concurrent stream and says so.
func TestHTTP1OpensAConnectionPerStream(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http2Stream(4))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL+"/v1", nil)
	tr := doTrace(t, c, chatRequest(true))
	if tr.Err != record.ErrNone || tr.Proto != "HTTP/1.1" || !tr.NewConn {
		t.Fatalf("err %q, proto %q, new connection %v; want HTTP/1.1 on a new connection", tr.Err, tr.Proto, tr.NewConn)
	}
}

// TestHTTP2RefusedByTheServer: a server that speaks only HTTP/1.1 fails
// the request (it is not measured on HTTP/1.1 unnoticed).
func TestHTTP2RefusedByTheServer(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{HTTP2TLS, HTTP2Cleartext} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewUnstartedServer(http2Stream(4))
			if mode == HTTP2TLS {
				srv.StartTLS() // EnableHTTP2 false: ALPN offers http/1.1 only
			} else {
				srv.Start()
			}
			t.Cleanup(srv.Close)
			c := newClient(t, srv.URL+"/v1", func(o *OpenAIOptions) { o.HTTP2, o.Insecure = mode, true })
			tr := doTrace(t, c, chatRequest(true))
			if tr.Err == record.ErrNone || tr.Proto == "HTTP/1.1" {
				t.Fatalf("err %q, proto %q: want a failure", tr.Err, tr.Proto)
			}
			t.Logf("%s: %s", tr.Err, tr.ErrMsg)
		})
	}
}

// TestHTTP2Options: a mode the URL's scheme cannot carry, or an unknown
// one, is refused with the fix.
func TestHTTP2Options(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ url, mode, want string }{
		{"http://127.0.0.1:1/v1", HTTP2TLS, "must be https://"},
		{"https://127.0.0.1:1/v1", HTTP2Cleartext, "must be http://"},
		{"http://127.0.0.1:1/v1", "h3", `want "h2"`},
	} {
		_, err := NewOpenAI(OpenAIOptions{BaseURL: tt.url, HTTP2: tt.mode})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s with %q: error %v, want %q", tt.url, tt.mode, err, tt.want)
		}
	}
}
