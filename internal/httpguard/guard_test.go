package httpguard

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLoopback: only loopback listeners go without a token, and only a
// Host naming a loopback address is answered without one.
func TestLoopback(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		ip   string
		want bool
	}{{"127.0.0.1", true}, {"::1", true}, {"0.0.0.0", false}, {"10.1.2.3", false}, {"::", false}} {
		if got := IsLoopback(&net.TCPAddr{IP: net.ParseIP(tt.ip)}); got != tt.want {
			t.Errorf("IsLoopback(%s) = %v, want %v", tt.ip, got, tt.want)
		}
	}
	for _, h := range []string{"localhost:1", "127.0.0.1:8089", "[::1]:8089", "127.0.0.1", "[::1]"} {
		if !LoopbackHost(h) {
			t.Errorf("%s refused", h)
		}
	}
	for _, h := range []string{"evil.example:8089", "10.0.0.1:8089", "localhost.evil.example", "", "0.0.0.0:8089"} {
		if LoopbackHost(h) {
			t.Errorf("%s accepted", h)
		}
	}
	tok, err := NewToken()
	if err != nil || len(tok) != 32 {
		t.Errorf("token %q, %v: want 32 hex digits", tok, err)
	}
}

// TestPolicy: one table over the guard's checks, on a real server, for
// a JSON surface with a small body limit.
func TestPolicy(t *testing.T) {
	t.Parallel()
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v map[string]any
		if code, err := DecodeJSON(r, &v); err != nil {
			Error(w, code, err)
			return
		}
		WriteJSON(w, http.StatusOK, v)
	})
	srv := httptest.NewServer(Policy{MaxBody: 1000}.Wrap(echo))
	defer srv.Close()
	big := `{"x": "` + strings.Repeat("a", 2000) + `"}`
	for _, tt := range []struct {
		name, ctype, body string
		header            map[string]string
		chunked           bool
		code              int
		want              string
	}{
		// JSON with its charset is JSON (it was refused with 415).
		{"charset", "application/json; charset=utf-8", `{"a":1}`, nil, false, 200, `"a":1`},
		{"plain json", "application/json", `{"a":1}`, nil, false, 200, `"a":1`},
		{"other charset", "application/json; charset=latin1", `{"a":1}`, nil, false, 415, "utf-8"},
		// What a cross-site form can send.
		{"text/plain", "text/plain", `{"a":1}`, nil, false, 415, "want application/json"},
		{"no type", "", `{"a":1}`, nil, false, 415, "want application/json"},
		// A body over the limit is a clear 413, declared or not.
		{"too big", "application/json", big, nil, false, 413, "body over 1000 bytes"},
		{"too big chunked", "application/json", big, nil, true, 413, "body over 1000 bytes"},
		// A cross-site script, or a rebinding page.
		{"cross origin", "application/json", `{}`, map[string]string{"Origin": "http://evil.example"}, false, 403, "cross-origin"},
		{"cross site fetch", "application/json", `{}`, map[string]string{"Sec-Fetch-Site": "cross-site"}, false, 403, "cross-origin"},
		{"same origin", "application/json", `{}`, map[string]string{"Origin": srv.URL, "Sec-Fetch-Site": "same-origin"}, false, 200, "{}"},
		{"foreign host", "application/json", `{}`, map[string]string{"Host": "evil.example"}, false, 403, "loopback"},
	} {
		var body io.Reader = strings.NewReader(tt.body)
		if tt.chunked {
			body = io.MultiReader(body) // no length: sent chunked
		}
		req, _ := http.NewRequest("POST", srv.URL, body)
		if tt.ctype != "" {
			req.Header.Set("Content-Type", tt.ctype)
		}
		resp, b := send(t, srv.Client(), req, tt.header)
		if resp.StatusCode != tt.code || !strings.Contains(string(b), tt.want) {
			t.Errorf("%s: %d %s, want %d with %q", tt.name, resp.StatusCode, b, tt.code, tt.want)
		}
		if resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: framing not forbidden", tt.name)
		}
	}
}

// TestBrowseURL: a wildcard listener prints an address a browser can
// open (it printed http://[::]:P), with a note; others print as they are.
func TestBrowseURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		addr, want string
		note       bool
	}{
		{"0.0.0.0:8089", "http://127.0.0.1:8089/", true},
		{"[::]:8089", "http://127.0.0.1:8089/", true},
		{"127.0.0.1:8089", "http://127.0.0.1:8089/", false},
		{"[::1]:8089", "http://[::1]:8089/", false},
		{"10.1.2.3:80", "http://10.1.2.3:80/", false},
	} {
		a, err := net.ResolveTCPAddr("tcp", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		got, note := BrowseURL(a)
		if got != tt.want || (note != "") != tt.note {
			t.Errorf("%s: %s (note %q), want %s (note %v)", tt.addr, got, note, tt.want, tt.note)
		}
	}
}

// TestOpenReads: with OpenReads a token-guarded surface lets loopback
// reads through without the token, marked Locked, and nothing else; the
// URL's ?token= beats a stale cookie and replaces it.
func TestOpenReads(t *testing.T) {
	t.Parallel()
	locked := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]bool{"locked": Locked(r)})
	})
	open := httptest.NewServer(Policy{Token: "s3cret", OpenReads: true, Cookie: "tok_1"}.Wrap(locked))
	defer open.Close()
	closed := httptest.NewServer(Policy{Token: "s3cret", Cookie: "tok_1"}.Wrap(locked))
	defer closed.Close()
	stale := "tok_1=old"
	for _, tt := range []struct {
		name, method, url string
		header            map[string]string
		code              int
		want              string // in the body
		setCookie         string // the Set-Cookie value wanted, "" none
	}{
		// Reads without the token: the page's figures, controls locked.
		{"get, no token", "GET", open.URL, nil, 200, `"locked":true`, ""},
		{"head, no token", "HEAD", open.URL, nil, 200, "", ""},
		// A stale cookie is no token at all for a read.
		{"get, stale cookie", "GET", open.URL, map[string]string{"Cookie": stale}, 200, `"locked":true`, ""},
		// With the token the read is not locked.
		{"get, bearer", "GET", open.URL, map[string]string{"Authorization": "Bearer s3cret"}, 200, `"locked":false`, ""},
		{"get, cookie", "GET", open.URL, map[string]string{"Cookie": "tok_1=s3cret"}, 200, `"locked":false`, ""},
		{"get, url token", "GET", open.URL + "/?token=s3cret", nil, 200, `"locked":false`, "s3cret"},
		// The URL's token beats the stale cookie and replaces it (the
		// cookie won, and the page was refused).
		{"url token over stale cookie", "GET", open.URL + "/?token=s3cret", map[string]string{"Cookie": stale}, 200, `"locked":false`, "s3cret"},
		// Changes always need the token.
		{"post, no token", "POST", open.URL, nil, 401, "token is required", ""},
		{"post, stale cookie", "POST", open.URL, map[string]string{"Cookie": stale}, 401, "not this server's", ""},
		{"post, cookie", "POST", open.URL, map[string]string{"Cookie": "tok_1=s3cret"}, 200, `"locked":false`, ""},
		{"post, url token over stale cookie", "POST", open.URL + "/?token=s3cret", map[string]string{"Cookie": stale}, 200, `"locked":false`, "s3cret"},
		// A rebinding page reads nothing.
		{"get, foreign host", "GET", open.URL, map[string]string{"Host": "evil.example"}, 401, "token is required", ""},
		// Without OpenReads a read needs the token too.
		{"closed get, no token", "GET", closed.URL, nil, 401, "token is required", ""},
	} {
		req, _ := http.NewRequest(tt.method, tt.url, nil)
		resp, b := send(t, http.DefaultClient, req, tt.header)
		if resp.StatusCode != tt.code || !strings.Contains(string(b), tt.want) {
			t.Errorf("%s: %d %s, want %d with %q", tt.name, resp.StatusCode, b, tt.code, tt.want)
		}
		var set string
		for _, c := range resp.Cookies() {
			if c.Name == "tok_1" {
				set = c.Value
			}
		}
		if set != tt.setCookie {
			t.Errorf("%s: Set-Cookie %q, want %q", tt.name, set, tt.setCookie)
		}
	}
}

// send sends req through c with header set as a browser would send it (a
// Host entry becomes the request's host) and returns the response with
// its body read.
func send(t *testing.T, c *http.Client, req *http.Request, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if h, ok := header["Host"]; ok {
		req.Host = h
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b
}
