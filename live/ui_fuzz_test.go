package live

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzUIAPI: whatever body a POST carries, the API answers a 2xx or 4xx
// with a JSON body, never a panic or a 5xx.
func FuzzUIAPI(f *testing.F) {
	for _, seed := range []string{`{"level": 4}`, `{"level": -1}`, `{"level": 1e400}`, `{"text": "x"}`, `{"text": ""}`,
		`{"level": null}`, `[]`, `{"level": 4}{"level": 5}`, "\x00", `{"text": "\u0000<script>"}`} {
		f.Add("/api/load", seed)
		f.Add("/api/note", seed)
	}
	s := &UIServer{tick: make(chan struct{})}
	s.sess.Store(&session{mon: NewMonitor(MonitorOptions{}), ctl: &fakeControl{}})
	h := s.guard(s.routes())
	f.Fuzz(func(t *testing.T, path, body string) {
		if path != "/api/load" && path != "/api/note" {
			return
		}
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8089"+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			t.Errorf("%s %q: %d %s", path, body, rec.Code, rec.Body.String())
		}
	})
}
