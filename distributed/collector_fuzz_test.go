package distributed

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// FuzzCollectorAPI drives every handler of the collector, behind its
// guard, with any method, path, query, content type and body: no panic,
// no 5xx. The request's context is already done, so a ready call that
// would wait for the other segment returns at once.
func FuzzCollectorAPI(f *testing.F) {
	for _, s := range []struct {
		method      byte
		target, typ string
		body        string
	}{
		{0, "/v1/status", "", ""}, {0, "/v1/clock", "", ""},
		{1, "/v1/segments/0/ready", "", ""}, {1, "/v1/segments/1/done", "", ""},
		{1, "/v1/segments/0/done", "text/plain", "x=1"},
		{1, "/v1/segments/-1/ready", "", ""}, {1, "/v1/segments/99999999999999999999/ready", "", ""},
		{2, "/v1/segments/0/files/events.jsonl?offset=0", uploadType, "{}\n"},
		{2, "/v1/segments/0/files/events.jsonl?offset=99", uploadType, "{}\n"},
		{2, "/v1/segments/0/files/events.jsonl?offset=-1", uploadType, "{}\n"},
		{2, "/v1/segments/0/files/records.jsonl.zst?offset=0", uploadType, "\x28\xb5\x2f\xfd garbage"},
		{2, "/v1/segments/0/files/segment.json?offset=0", uploadType, `{"clock": 5}`},
		{2, "/v1/segments/0/files/..%2f..%2fevil?offset=0", uploadType, "x"},
		{2, "/v1/segments/1/files/telemetry.jsonl?offset=0", "application/json", "{\"time_us\": 1}\n"},
	} {
		f.Add(s.method, s.target, s.typ, s.body)
	}
	methods := []string{"GET", "POST", "PUT", "DELETE", "HEAD"}
	c, err := NewCollector(CollectorConfig{Segments: 2, Dir: f.TempDir(), Now: time.Now, Feed: &Feed{}})
	if err != nil {
		f.Fatal(err)
	}
	h := c.Handler()
	f.Fuzz(func(t *testing.T, method byte, target, ctype, body string) {
		u, err := url.ParseRequestURI(target)
		if err != nil || !strings.HasPrefix(target, "/") {
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		req := httptest.NewRequestWithContext(ctx, methods[int(method)%len(methods)], "http://127.0.0.1:8089/", strings.NewReader(body))
		req.URL, req.RequestURI = u, target
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Errorf("%s %s %q: %d %.200s", req.Method, target, body, rec.Code, rec.Body.String())
		}
	})
}
