package cli

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// TestPreflightExitCodes: a target nothing listens on stops `run` at once
// with exit 1, the reason and no run directory; --no-preflight runs it
// and records the refusals.
func TestPreflightExitCodes(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	dir := t.TempDir()
	base := []string{"run", "-q", "--url", url, "--concurrency", "2", "--requests", "6", "--out", dir}
	code, _, stderr := runCLI(t, base...)
	if code != ExitError || !strings.Contains(stderr, "pre-flight") || !strings.Contains(stderr, "connection_refused") {
		t.Fatalf("dead target: exit %d (want %d), stderr %q", code, ExitError, stderr)
	}
	if runs, _ := filepath.Glob(filepath.Join(dir, "*")); len(runs) != 0 {
		t.Fatalf("dead target: run directories %v, want none", runs)
	}
	code, stdout, stderr := runCLI(t, append(base, "--no-preflight", "-o", "json")...)
	if code != ExitOK || !strings.Contains(stdout, `"connection_refused": 6`) {
		t.Fatalf("--no-preflight: exit %d, stdout %q, stderr %q; want exit 0 and 6 refusals", code, stdout, stderr)
	}
}

// TestPreflightNeverPrintsTheKey: a misconfigured gateway echoes the
// Authorization header into its 404 body and into the model ids of
// /models, as sent, upper-cased, JSON-escaped and split, among terminal
// escape sequences. The pre-flight error (stderr here; the live page shows
// the same error) holds no form of the key and no control character.
func TestPreflightNeverPrintsTheKey(t *testing.T) {
	t.Parallel()
	const key = "sk-gw/echo-0123456789abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if strings.HasSuffix(r.URL.Path, "/models") {
			escaped := strings.ReplaceAll(auth, "/", `\/`)
			half := len(auth) / 2
			fmt.Fprintf(w, `{"data":[{"id":%q},{"id":%q},{"id":"%s"},{"id":%q},{"id":%q},{"id":"\u001b]0;pwned\u0007\u001b[2Jm"}]}`,
				auth, strings.ToUpper(auth), escaped, auth[:half], auth[half:])
			return
		}
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"message":"no model for \u001b[31m%s"}}`, strings.ReplaceAll(auth, "/", `\/`))
	}))
	t.Cleanup(srv.Close)
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "run", "-q", "--url", srv.URL+"/v1", "--model", "m", "--api-key-file", keyFile,
		"--concurrency", "1", "--requests", "2", "--out", t.TempDir())
	if code != ExitError || !strings.Contains(stderr, "/models lists") {
		t.Fatalf("exit %d, stderr %q: want a pre-flight error naming the models", code, stderr)
	}
	out := strings.ToLower(stdout + stderr)
	for _, form := range []string{key, `sk-gw\/echo`, "0123456789abcdef", "sk-gw/echo-0"} {
		if strings.Contains(out, strings.ToLower(form)) {
			t.Errorf("the output holds %q of the key:\n%s", form, stderr)
		}
	}
	if i := strings.IndexFunc(stderr, func(r rune) bool { return r != '\n' && unicode.IsControl(r) }); i >= 0 {
		t.Errorf("stderr holds control character %q:\n%q", stderr[i], stderr)
	}
}
