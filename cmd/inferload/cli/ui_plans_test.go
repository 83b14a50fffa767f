package cli

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startUICommand runs `inferload ui` with args on a free loopback port
// and returns the URL it printed and a stop function.
func startUICommand(t *testing.T, args ...string) string {
	t.Helper()
	sig := make(chan os.Signal, 1)
	var errb syncBuffer
	st := &State{Args: append([]string{"ui", "--listen", "127.0.0.1:0"}, args...), Stdout: &bytes.Buffer{}, Stderr: &errb,
		Getenv: func(string) string { return "" }, ReadFile: os.ReadFile, Signals: sig, Version: "test"}
	exit := make(chan int, 1)
	go func() { exit <- Main(st) }()
	t.Cleanup(func() {
		sig <- os.Interrupt
		select {
		case code := <-exit:
			if code != ExitOK {
				t.Errorf("ui exit %d: %s", code, errb.String())
			}
		case <-time.After(30 * time.Second):
			t.Error("inferload ui did not end on Ctrl-C")
		}
	})
	re := regexp.MustCompile(`inferload ui at (http://[^\s;]+)`)
	var printed string
	waitFor(t, "the ui command listening", func() (bool, error) {
		if m := re.FindStringSubmatch(errb.String()); m != nil {
			printed = m[1]
			return true, nil
		}
		return false, nil
	})
	return printed
}

// TestUILauncherPlans: the launcher needs its token even on loopback (it
// reads files and starts runs; any local user could otherwise), reads
// plans only from its plan directories, only regular YAML files of a
// bounded size, and never echoes a file's content in an error. Before,
// {"plan": FILE} read any file the launcher's user could and showed it.
func TestUILauncherPlans(t *testing.T) {
	t.Parallel()
	plans, elsewhere, out := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(dir, name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	secret := write(elsewhere, "shadow.yaml", "root:$6$SECRETHASH:19000:0:99999:7:::\n")
	leaky := write(plans, "leaky.yaml", "OPENAI_API_KEY: sk-SECRET1\nload:\n  concurrency: sk-SECRET2\n")
	big := write(plans, "big.yaml", "# "+strings.Repeat("x", 2<<20)+"\n")
	notYAML := write(plans, ".env", "OPENAI_API_KEY=sk-SECRET3\n")
	bad := write(plans, "bad.yaml", "load:\n  concurrency: 0\n")
	if err := os.Mkdir(filepath.Join(plans, "dir.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(plans, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	printed := startUICommand(t, "--out", out, "--plan-dir", plans)
	if !strings.Contains(printed, "?token=") {
		t.Fatalf("printed %s: want the URL with its token, loopback or not", printed)
	}
	base, token, _ := strings.Cut(printed, "/?token=")
	call := func(method, path, body, tok string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	plan := func(p string) string { return `{"url": "http://127.0.0.1:1/v1", "plan": "` + p + `"}` }
	for _, tt := range []struct {
		name, method, path, body, token string
		code                            int
		want                            string
	}{
		// No token, even on loopback: nothing is answered.
		{"list without token", "GET", "/api/runs", "", "", 401, "token"},
		{"start without token", "POST", "/api/runs", plan(bad), "", 401, "token"},
		{"page without token", "GET", "/", "", "", 401, "token"},
		// Outside the plan directories, or out through a link.
		{"elsewhere", "POST", "/api/runs", plan(secret), token, 400, "not in the plan directories"},
		{"etc", "POST", "/api/runs", plan("/etc/passwd"), token, 400, "not in the plan directories"},
		{"link out", "POST", "/api/runs", plan(filepath.Join(plans, "link.yaml")), token, 400, "plan"},
		{"dev zero", "POST", "/api/runs", plan("/dev/zero"), token, 400, "not in the plan directories"},
		// In them, but not a plan.
		{"not yaml", "POST", "/api/runs", plan(notYAML), token, 400, ".yaml"},
		{"too big", "POST", "/api/runs", plan(big), token, 400, "over 1048576 bytes"},
		{"a directory", "POST", "/api/runs", plan(filepath.Join(plans, "dir.yaml")), token, 400, "not a regular file"},
		// A plan's errors name the line and field, not the file's text.
		{"leaky", "POST", "/api/runs", plan(leaky), token, 400, "leaky.yaml:3: load.concurrency"},
		{"bad", "POST", "/api/runs", plan(bad), token, 400, "load.concurrency"},
		{"list", "GET", "/api/runs", "", token, 200, `"runs":[]`},
	} {
		code, body := call(tt.method, tt.path, tt.body, tt.token)
		t.Logf("%s: %d %s", tt.name, code, strings.TrimSpace(body))
		if code != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %.300s, want %d with %q", tt.name, code, body, tt.code, tt.want)
		}
		for _, s := range []string{"SECRET", "root:"} {
			if strings.Contains(body, s) {
				t.Errorf("%s: the answer shows the file's content: %.300s", tt.name, body)
			}
		}
	}
}
