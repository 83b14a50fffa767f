package distributed

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/schedule"
)

// TestCollectorRefusesBrowsers: a collector on loopback needs no token,
// so what keeps a web page away from it is the shared guard: a
// cross-site POST (a form's text/plain body, or a bodiless fetch) cannot
// end the run, and a DNS-rebinding page (the attacker's host name) can
// neither put files nor read the status; the segments' own calls (Go
// clients: no Origin, loopback Host) go through.
func TestCollectorRefusesBrowsers(t *testing.T) {
	t.Parallel()
	c, srv := serveCollector(t, CollectorConfig{Segments: 1, Now: time.Now})
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

// TestCollectorUploadBounds: an append over maxUpload is a 413 that says
// so (it was taken up to 256 MiB); the collector's memory does not grow
// with the size of an append (3 x 250 MB took 1.74 GB: each was read
// whole), measured as the bytes allocated while a 16 MiB append is
// taken; and no more than maxUploads appends are taken at once. Not
// parallel: the allocation count is the whole process's.
func TestCollectorUploadBounds(t *testing.T) {
	// No Feed: decoding lines for the live view makes garbage line by
	// line, which the allocation count would take for the append's.
	c, srv := serveCollector(t, CollectorConfig{Segments: 1, Now: time.Now})
	put := func(ctx context.Context, name string, body []byte) (int, string, error) {
		req, _ := http.NewRequestWithContext(ctx, "PUT", srv.URL+"/v1/segments/0/files/"+name+"?offset=0", bytes.NewReader(body))
		req.Header.Set("Content-Type", uploadType)
		resp, err := srv.Client().Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	over := make([]byte, maxUpload+1)
	if code, body, err := put(context.Background(), rundir.Events, over); err == nil && (code != 413 || !strings.Contains(body, "body over 16777216 bytes")) {
		t.Errorf("an append of %d bytes: %d %s, want 413 saying it is over the limit", len(over), code, body)
	}
	lines := bytes.Repeat([]byte(`{"time_us":1,"kind":"note","message":"x"}`+"\n"), maxUpload/42)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code, body, err := put(context.Background(), rundir.Events, lines)
	runtime.ReadMemStats(&after)
	if err != nil || code != 200 {
		t.Fatalf("a %d-byte append: %d %s %v", len(lines), code, body, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(lines))/4 {
		t.Errorf("taking a %d-byte append allocated %d bytes: want it streamed, well under the append's size", len(lines), alloc)
	}
	// Every slot taken: the next append waits (its client gives up).
	for range maxUploads {
		c.slots <- struct{}{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, _, err := put(ctx, rundir.Telemetry, []byte("{}\n")); err == nil {
		t.Error("an append was taken past maxUploads at once")
	}
	// Looked at while the slots are still held: once they are freed, the
	// handler the client left may take one before the server has seen the
	// connection close (its request context is not cancelled yet) and
	// write the 3 bytes it already holds, which is no breach of the bound.
	if n := c.Status()[0].Bytes[rundir.Telemetry]; n != 0 {
		t.Errorf("telemetry.jsonl holds %d bytes: the waiting append was written", n)
	}
	for range maxUploads {
		<-c.slots
	}
}

// TestCollectorRefusesAnEarlierCollection: a directory that holds a
// segment's files from an earlier collection is refused, not appended to
// (the collector starts from nothing, so its bytes would be merged with
// the new run's).
func TestCollectorRefusesAnEarlierCollection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "segment-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := NewCollector(CollectorConfig{Segments: 2, Dir: dir, Now: time.Now}); err != nil {
		t.Errorf("an empty segment directory: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "segment-1", rundir.Events), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewCollector(CollectorConfig{Segments: 2, Dir: dir, Now: time.Now}); err == nil || !strings.Contains(err.Error(), "earlier collection") {
		t.Errorf("a directory with an earlier collection's files: %v, want refused", err)
	}
}

// TestUploaderSendsALineLongerThanAPiece: a line longer than one append
// (a record can be up to rundir.MaxLineBytes) goes in pieces rather than
// never, and the collector holds it whole.
func TestUploaderSendsALineLongerThanAPiece(t *testing.T) {
	t.Parallel()
	c, srv := serveCollector(t, CollectorConfig{Segments: 1, Now: time.Now})
	dir := t.TempDir()
	line := append(bytes.Repeat([]byte("x"), maxUpload+maxUpload/2), '\n')
	if err := os.WriteFile(filepath.Join(dir, rundir.Events), line, 0o644); err != nil {
		t.Fatal(err)
	}
	up := StartUpload(srv.Client(), srv.URL, schedule.Segment{Index: 0, Count: 1}, dir, time.Hour, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := up.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(c.SegmentDir(0), rundir.Events))
	if err != nil || !bytes.Equal(got, line) {
		t.Errorf("the collector holds %d bytes (%v), want the %d-byte line", len(got), err, len(line))
	}
}
