package cli

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
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
