package distributed

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFetchRun: the collector serves nothing before the merge (409 with
// why), nothing without its token (401), and then exactly the merged run
// directory: its files and subdirectories, byte for byte, under the
// directory's name; a link in it (to a secret beside it) is left out.
// A second fetch into the same place refuses to overwrite the first.
func TestFetchRun(t *testing.T) {
	t.Parallel()
	c, srv := serveCollector(t, CollectorConfig{Segments: 1, Now: time.Now, Token: "tok"})
	client := WithToken(srv.Client(), "tok")
	out := t.TempDir()
	ctx := context.Background()
	if _, err := FetchRun(ctx, client, srv.URL, out); err == nil || !strings.Contains(err.Error(), "409") || !strings.Contains(err.Error(), "not merged yet") {
		t.Errorf("before the merge: %v; want a 409 saying it is not merged yet", err)
	}

	base := t.TempDir()
	run := filepath.Join(base, "20261201T200000Z-launch")
	files := map[string]string{"summary.json": `{"requests":1}`, "plan.yaml": "name: launch\n", "spans/part.jsonl": "{}\n"}
	for name, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(run, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "secret"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "secret"), filepath.Join(run, "link")); err != nil {
		t.Fatal(err)
	}
	c.publish(run)

	if _, err := FetchRun(ctx, srv.Client(), srv.URL, out); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("without the token: %v; want a 401", err)
	}
	dir, err := FetchRun(ctx, client, srv.URL, out)
	if err != nil || dir != filepath.Join(out, "20261201T200000Z-launch") {
		t.Fatalf("fetch: %q, %v", dir, err)
	}
	for name, body := range files {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != body {
			t.Errorf("%s: %q, %v; want %q", name, got, err, body)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "link")); err == nil {
		t.Error("a link in the run directory was served")
	}
	if _, err := FetchRun(ctx, client, srv.URL, out); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("a second fetch into %s: %v; want a refusal to overwrite", out, err)
	}
}

// tarOf is an archive of the given entries (a name ending in / is a
// directory, one with "->" a link).
func tarOf(t *testing.T, names ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, n := range names {
		hdr := &tar.Header{Name: n, Mode: 0o644, Typeflag: tar.TypeReg, Size: 2}
		switch {
		case strings.HasSuffix(n, "/"):
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		case strings.Contains(n, "->"):
			name, target, _ := strings.Cut(n, "->")
			hdr = &tar.Header{Name: name, Linkname: target, Typeflag: tar.TypeSymlink}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Size > 0 {
			_, _ = tw.Write([]byte("x\n"))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestUnpackRunRefuses: an archive that would write outside --out, or
// anything but one run directory of plain files, is refused, and nothing
// is left of it.
func TestUnpackRunRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		entries []string
		want    string
	}{
		// A name climbing out of --out.
		{"dot-dot", []string{"run/", "run/../../evil"}, "not inside one run directory"},
		{"dot-dot first", []string{"../evil"}, "not inside one run directory"},
		// An absolute name.
		{"absolute", []string{"/tmp/evil"}, "not inside one run directory"},
		// A link that a later entry would write through.
		{"link", []string{"run/", "run/out->/tmp", "run/out/evil"}, "not a file or a directory"},
		// Two top directories: not one run.
		{"two runs", []string{"run/a", "other/b"}, "not inside one run directory"},
		// Nothing at all.
		{"empty", nil, "empty archive"},
	}
	for _, tt := range tests {
		out := t.TempDir()
		_, err := UnpackRun(bytes.NewReader(tarOf(t, tt.entries...)), out)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want %q", tt.name, err, tt.want)
		}
		if left, _ := os.ReadDir(out); len(left) != 0 {
			t.Errorf("%s: left %d entries in --out", tt.name, len(left))
		}
	}
	// A cut download removes the half run directory it made.
	whole := tarOf(t, "run/", "run/a", "run/b")
	out := t.TempDir()
	// Cut inside b's two bytes: before them its data block (512) and the
	// archive's end (1024).
	if _, err := UnpackRun(bytes.NewReader(whole[:len(whole)-1024-511]), out); err == nil {
		t.Error("a cut archive unpacked without error")
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("a cut download left %d entries", len(left))
	}
}

// TestCollectorSealed: once the collector stops gathering (to merge), a
// late segment's appends, ready and done are answered 410 with why, and
// nothing more is written to its files.
func TestCollectorSealed(t *testing.T) {
	t.Parallel()
	c, srv := serveCollector(t, CollectorConfig{Segments: 1, Now: time.Now})
	put := func() *http.Response {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v1/segments/0/files/events.jsonl?offset=0", strings.NewReader("{}\n"))
		req.Header.Set("Content-Type", uploadType)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := put(); resp.StatusCode != http.StatusOK {
		t.Fatalf("an append before the seal: %s", resp.Status)
	}
	c.seal()
	if resp := put(); resp.StatusCode != http.StatusGone {
		t.Errorf("an append after the seal: %s, want 410", resp.Status)
	}
	resp, err := srv.Client().Post(srv.URL+"/v1/segments/0/done", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusGone || c.Finished() != 0 {
		t.Errorf("done after the seal: %s, %d finished; want 410 and none", resp.Status, c.Finished())
	}
	if b, _ := os.ReadFile(filepath.Join(c.SegmentDir(0), "events.jsonl")); string(b) != "{}\n" {
		t.Errorf("events.jsonl holds %q after the seal, want the one line from before", b)
	}
}

// TestSealCutsOffAHungUpload: an upload that never ends (a segment cut
// off mid-body) holds the seal for sealGrace only; what it sends later
// is not written.
func TestSealCutsOffAHungUpload(t *testing.T) {
	t.Parallel()
	c, srv := serveCollector(t, CollectorConfig{Segments: 1, Now: time.Now})
	body, feed := io.Pipe()
	defer feed.Close()
	answer := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v1/segments/0/files/events.jsonl?offset=0", body)
		req.Header.Set("Content-Type", uploadType)
		resp, err := srv.Client().Do(req)
		if err != nil {
			answer <- 0
			return
		}
		resp.Body.Close()
		answer <- resp.StatusCode
	}()
	if _, err := feed.Write([]byte("{}\n")); err != nil { // the handler reads: it has the call
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for c.Status()[0].LastSeen.IsZero() && time.Now().Before(deadline) { // in appendAt, waiting for the rest
		time.Sleep(5 * time.Millisecond)
	}
	sealed := make(chan struct{})
	go func() { c.seal(); close(sealed) }()
	select {
	case <-sealed:
	case <-time.After(sealGrace + 20*time.Second):
		t.Fatal("a hung upload holds the seal")
	}
	_ = feed.Close() // the body ends now: its bytes come after the seal
	if code := <-answer; code != http.StatusGone {
		t.Errorf("the upload cut off by the seal was answered %d, want 410", code)
	}
	if _, err := os.Stat(filepath.Join(c.SegmentDir(0), "events.jsonl")); err == nil {
		t.Error("an upload cut off by the seal wrote its file")
	}
}
