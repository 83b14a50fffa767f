package live

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
)

// fuzzMethods are the methods the fuzz targets pick from (a byte of the
// input chooses).
var fuzzMethods = []string{"GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"}

// fuzzRequest builds a request of the guarded surface from fuzz input,
// or nil when target is not a request target at all. Its context is
// already done, so the event stream sends one message and returns.
func fuzzRequest(method byte, target, ctype, body string) *http.Request {
	u, err := url.ParseRequestURI(target)
	if err != nil || !strings.HasPrefix(target, "/") {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, fuzzMethods[int(method)%len(fuzzMethods)], "http://127.0.0.1:8089/", strings.NewReader(body))
	req.URL, req.RequestURI = u, target
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	return req
}

// checkAnswer: never a 5xx, and every API answer is JSON.
func checkAnswer(t *testing.T, req *http.Request, body string, rec *httptest.ResponseRecorder) {
	t.Helper()
	ct := rec.Header().Get("Content-Type")
	api := strings.HasPrefix(req.URL.Path, "/api/") || strings.HasPrefix(req.URL.Path, "/live/api/")
	if rec.Code >= 500 || (api && rec.Code != 404 && rec.Code != 405 && !strings.HasPrefix(ct, "application/json") && ct != "text/event-stream") {
		t.Errorf("%s %s %q: %d %s %.200s", req.Method, req.URL, body, rec.Code, ct, rec.Body.String())
	}
}

// fuzzSeeds are requests of every handler, the bad ones issue 33 found
// among them (since past the last point panicked).
func fuzzSeeds(f *testing.F, prefix string) {
	for _, s := range []struct {
		method      byte
		target, typ string
		body        string
	}{
		{0, "/", "", ""}, {0, "/assets/live.js", "", ""}, {0, "/assets/..%2fui.go", "", ""},
		{0, "/api/state", "", ""}, {0, "/api/state?since=99", "", ""}, {0, "/api/state?tel_since=99", "", ""},
		{0, "/api/state?since=-1&tel_since=x", "", ""}, {0, "/api/state?since=9223372036854775808", "", ""},
		{0, "/api/events", "", ""},
		{1, "/api/load", "application/json", `{"level": 4}`}, {1, "/api/load", "application/json", `{"level": -1}`},
		{1, "/api/load", "application/json", `{"level": 1e400}`}, {1, "/api/load", "application/json", `{"level": 1000000}`},
		{1, "/api/load", "application/json; charset=utf-8", `{"level": null}`},
		{1, "/api/note", "application/json", `{"text": "\u0000<script>"}`}, {1, "/api/note", "text/plain", `{"text": "x"}`},
		{1, "/api/pause", "application/json", `{}`}, {1, "/api/resume", "", ""}, {1, "/api/stop", "application/json", `[]`},
		{1, "/api/abort", "application/json", "\x00"},
	} {
		f.Add(s.method, prefix+s.target, s.typ, s.body)
	}
}

// FuzzUIAPI drives every handler of the live UI, behind its guard (a
// loopback UI's: reads open, changes with the token), with any method,
// path, query, content type and body, with the token and without: no
// panic, no 5xx, JSON answers from the API.
func FuzzUIAPI(f *testing.F) {
	fuzzSeeds(f, "")
	s := &UIServer{tick: make(chan struct{}), closing: true, token: "t", openReads: true}
	mon := NewMonitor(MonitorOptions{})
	mon.Start("runs/x", time.Minute)
	mon.Observe(&record.Result{SendUS: 1, E2EUS: 2, TTFTUS: 1, Stream: true, EventsUS: []int64{1, 2}, OutputTokens: 2})
	mon.Sample(observe.Sample{TimeUS: 1, Values: map[string]float64{"queue_depth": 1}})
	s.sess.Store(&session{mon: mon, ctl: &fakeControl{level: 2}})
	h := s.guard(s.routes())
	f.Fuzz(func(t *testing.T, method byte, target, ctype, body string) {
		req := fuzzRequest(method, target, ctype, body)
		if req == nil {
			return
		}
		if method < 128 { // half the inputs reach the handlers with the token, half as a locked reader
			req.Header.Set("Authorization", "Bearer t")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkAnswer(t, req, body, rec)
	})
}

// FuzzLauncherAPI is FuzzUIAPI for `inferload ui`: its own endpoints and
// the live UI under /live/, before and after a run starts.
func FuzzLauncherAPI(f *testing.F) {
	fuzzSeeds(f, "/live")
	for _, s := range []struct{ target, typ, body string }{
		{"/api/runs", "application/json", `{"url": "http://127.0.0.1:1/v1", "level": 2}`},
		{"/api/runs", "application/json", `{"plan": "/etc/shadow"}`},
		{"/api/runs", "application/json", `{"plan": "/dev/zero", "url": "x"}`},
		{"/runs/a/report.html", "", ""}, {"/runs/..%2f..%2fetc/report.html", "", ""},
	} {
		f.Add(byte(1), s.target, s.typ, s.body)
		f.Add(byte(0), s.target, s.typ, s.body)
	}
	l := &fakeLauncher{dir: f.TempDir()}
	s := &UIServer{tick: make(chan struct{}), closing: true, token: "t"}
	h := s.guard(s.launcherRoutes(l))
	f.Fuzz(func(t *testing.T, method byte, target, ctype, body string) {
		req := fuzzRequest(method, target, ctype, body)
		if req == nil {
			return
		}
		req.Header.Set("Authorization", "Bearer t")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkAnswer(t, req, body, rec)
	})
}
