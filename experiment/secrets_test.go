package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// headerSecret is sent as X-Api-Key; echoServer plants it, and the API
// key, in everything it answers.
const headerSecret = "xk-header-SECRET-41b7"

// echoServer echoes the credentials it was sent wherever a server could:
// the /v1/models ids and Server header (into env.json and report.html),
// 401 bodies, error events and a Content-Type (into records and events).
func echoServer(t *testing.T) *httptest.Server {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		auth := r.Header.Get("Authorization")
		// As sent, then altered as gateways alter it: upper-cased,
		// JSON-escaped, and cut in two around a space.
		echo := auth + " " + r.Header.Get("X-Api-Key") + " " + strings.ToUpper(auth) + " " +
			strings.ReplaceAll(auth, "-", `\u002d`) + " " + auth[:len(auth)/2] + " " + auth[len(auth)/2:]
		w.Header().Set("Server", "echo/1 "+echo)
		w.Header().Set("X-Version", echo)
		if strings.HasSuffix(r.URL.Path, "/models") {
			_ = json.NewEncoder(w).Encode(map[string]any{"data": []map[string]any{{"id": "m " + echo, "owned_by": echo}}})
			return
		}
		switch n.Add(1) % 3 {
		case 0:
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"bad credentials %s"}}`, echo)
		case 1:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"error\":{\"message\":\"echo %s\"}}\n\n", echo)
		default:
			w.Header().Set("Content-Type", "text/plain; "+echo)
			fmt.Fprint(w, "not a stream "+echo)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSecretsNeverWritten: the API key and a secret header, echoed back by
// the server in every reply, appear in no file of the run directory.
func TestSecretsNeverWritten(t *testing.T) {
	t.Parallel()
	srv := echoServer(t)
	res := runPlan(t, fmt.Sprintf(`
target:
  preflight: false
  url: %s/v1
  api_key_env: TEST_KEY
  headers: {X-Api-Key: %s}
load: {concurrency: 2, requests: 12}
workload: {input_tokens: "8", output_tokens: "4"}
`, srv.URL, headerSecret))
	if res.Summary.Requests.Failed != 12 {
		t.Fatalf("%d failed, want all 12 (the echoes must have been recorded)", res.Summary.Requests.Failed)
	}
	redacted := 0
	err := filepath.WalkDir(res.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := readMaybeCompressed(path)
		if err != nil {
			return err
		}
		// Any 8 bytes of a secret, in any case, are a leak.
		lower := strings.ToLower(string(b))
		for _, s := range []string{secretKey, headerSecret} {
			for i := 0; i+8 <= len(s); i++ {
				if piece := strings.ToLower(s[i : i+8]); strings.Contains(lower, piece) {
					t.Errorf("%s holds %q of the secret %q", filepath.Base(path), piece, s)
					break
				}
			}
		}
		redacted += strings.Count(string(b), "[redacted]")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	env, _ := os.ReadFile(filepath.Join(res.Dir, "env.json"))
	if !strings.Contains(string(env), "m Bearer [redacted] [redacted] BEARER [redacted]") {
		t.Errorf("env.json does not show the redacted echo of /v1/models:\n%s", env)
	}
	if redacted == 0 {
		t.Error("nothing was redacted: the server's echoes never reached the files")
	}
}

// readMaybeCompressed reads path, decompressed when it is zstd (the
// records), so a secret cannot hide from the check inside a frame.
func readMaybeCompressed(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasSuffix(path, ".zst") {
		return b, err
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	return dec.DecodeAll(b, nil)
}
