package dist

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestCollectorRefusesBrowsers: a collector on loopback needs no token,
// so what keeps a web page away from it is the shared guard: a
// cross-site POST (a form's text/plain body, or a bodiless fetch) cannot
// end the run, and a DNS-rebinding page (the attacker's host name) can
// neither put files nor read the status; the segments' own calls (Go
// clients: no Origin, loopback Host) go through.
func TestCollectorRefusesBrowsers(t *testing.T) {
	t.Parallel()
	c, err := NewCollector(CollectorConfig{Segments: 1, Dir: t.TempDir(), Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	for _, tc := range []struct {
		name, method, path, body string
		header                   map[string]string
		code                     int
	}{
		// A form on any web page posting text/plain ends the run today.
		{"cross-site text/plain done", "POST", "/v1/segments/0/done", "x=1",
			map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example"}, 403},
		// A fetch with no body still carries its Origin.
		{"cross-site bodiless done", "POST", "/v1/segments/0/done", "",
			map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, 403},
		// A rebinding page reaches 127.0.0.1 under its own host name.
		{"rebinding put", "PUT", "/v1/segments/0/files/events.jsonl?offset=0", "{}\n",
			map[string]string{"Host": "evil.example:8089", "Origin": "http://evil.example:8089"}, 403},
		{"rebinding status", "GET", "/v1/status", "", map[string]string{"Host": "evil.example:8089"}, 403},
		// A body a segment never sends: a form's type.
		{"form put", "PUT", "/v1/segments/0/files/events.jsonl?offset=0", "{}\n",
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		// What a segment sends.
		{"segment put", "PUT", "/v1/segments/0/files/events.jsonl?offset=0", "{}\n",
			map[string]string{"Content-Type": "application/octet-stream"}, 200},
		{"segment status", "GET", "/v1/status", "", nil, 200},
	} {
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		if h, ok := tc.header["Host"]; ok {
			req.Host = h
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.code)
		}
	}
	if c.Finished() != 0 {
		t.Error("a cross-site request ended the segment")
	}
	if st := c.Status()[0]; st.Bytes["events.jsonl"] != 3 {
		t.Errorf("events.jsonl holds %d bytes, want the segment's 3 only", st.Bytes["events.jsonl"])
	}
}
