package cli

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestUITokenPrintedOnlyInTheURL: `run --ui` on loopback has a token
// (it had none there): one generated is printed once, in the URL line on
// stderr, for the user to open; one given in $INFERLOAD_UI_TOKEN is a
// secret the user already has and is never printed. Neither reaches
// stdout or any file of the run directory (summary, events, report).
func TestUITokenPrintedOnlyInTheURL(t *testing.T) {
	t.Parallel()
	chat := chatServer(t, 4, time.Millisecond)
	urlLine := regexp.MustCompile(`live UI at http://127\.0\.0\.1:\d+/\?token=([0-9a-f]{32})\n`)
	for _, tt := range []struct {
		name, env string
		printed   int // times the token shows on stderr
	}{
		// Generated: the printed URL is the only way in for the controls.
		{"generated", "", 1},
		// From the environment: "(token from $INFERLOAD_UI_TOKEN)".
		{"from env", "tok-secret-4711", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			var stdout, stderr bytes.Buffer
			st := &State{Args: []string{"run", "--url", chat.URL + "/v1", "--concurrency", "2", "--requests", "6",
				"--input-tokens", "8", "--output-tokens", "4", "--out", out, "--ui", "127.0.0.1:0"},
				Stdout: &stdout, Stderr: &stderr, ReadFile: os.ReadFile, Version: "test",
				Getenv: func(k string) string {
					if k == uiTokenEnv {
						return tt.env
					}
					return ""
				}}
			if code := Main(st); code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			token := tt.env
			if token == "" {
				m := urlLine.FindStringSubmatch(stderr.String())
				if m == nil {
					t.Fatalf("stderr has no live UI URL with a token:\n%s", stderr.String())
				}
				token = m[1]
			} else if !strings.Contains(stderr.String(), "(token from $"+uiTokenEnv+")") {
				t.Errorf("stderr does not say where the token comes from:\n%s", stderr.String())
			}
			if n := strings.Count(stderr.String(), token); n != tt.printed {
				t.Errorf("the token is on stderr %d times, want %d:\n%s", n, tt.printed, stderr.String())
			}
			if strings.Contains(stdout.String(), token) {
				t.Error("the token is on stdout")
			}
			err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(path)
				if err == nil && bytes.Contains(b, []byte(token)) {
					t.Errorf("%s holds the token", path)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestUILingerAfterTheSummary: with --ui-linger the terminal gets its
// summary when the run ends, not after the linger, and the page's stop
// during the linger ends it (the process exits long before the 10
// minutes asked).
func TestUILingerAfterTheSummary(t *testing.T) {
	t.Parallel()
	chat := chatServer(t, 4, time.Millisecond)
	cmd := exec.Command(os.Args[0], "run", "--url", chat.URL+"/v1", "--concurrency", "2", "--requests", "6",
		"--input-tokens", "8", "--output-tokens", "4", "--out", t.TempDir(), "--ui", "127.0.0.1:0", "--ui-linger", "10m")
	cmd.Env = append(os.Environ(), "INFERLOAD_CLI_CHILD=1", uiTokenEnv+"=linger-token")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	url, lingering, summary := make(chan string, 1), make(chan struct{}), make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		urlLine := regexp.MustCompile(`live UI at (http://127\.0\.0\.1:\d+)/`)
		for sc.Scan() {
			if m := urlLine.FindStringSubmatch(sc.Text()); m != nil {
				url <- m[1]
			}
			if strings.HasPrefix(sc.Text(), "live UI stays up for 10m0s (Ctrl-C or the page's stop ends it)") {
				close(lingering)
			}
		}
	}()
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "Requests ") {
				close(summary)
			}
		}
	}()
	deadline := time.After(childPatience)
	var base string
	for _, wait := range []struct {
		what string
		ch   <-chan struct{}
	}{{"the UI's URL", nil}, {"the summary on stdout", summary}, {"the linger", lingering}} {
		if wait.ch == nil {
			select {
			case base = <-url:
			case <-deadline:
				t.Fatalf("no %s", wait.what)
			}
			continue
		}
		select {
		case <-wait.ch:
		case <-deadline:
			t.Fatalf("no %s while the UI lingers: the terminal waits for the page", wait.what)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/api/stop", nil)
	req.Header.Set("Authorization", "Bearer linger-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := cmd.ProcessState.ExitCode(); code != ExitOK {
			t.Errorf("exit %d (%v) after the page's stop during the linger, want %d", code, err, ExitOK)
		}
	case <-time.After(childPatience):
		t.Fatal("the page's stop did not end the linger")
	}
}
