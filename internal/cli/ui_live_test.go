package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestUITokenFromEnvNeverPrinted: a token given in $INFERLOAD_UI_TOKEN
// is a secret the user already has: it reaches neither the output nor
// any file of the run directory.
func TestUITokenFromEnvNeverPrinted(t *testing.T) {
	t.Parallel()
	const token = "tok-secret-4711"
	chat := chatServer(t, 4, time.Millisecond)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	st := &State{Args: []string{"run", "--url", chat.URL + "/v1", "--concurrency", "2", "--requests", "6",
		"--input-tokens", "8", "--output-tokens", "4", "--out", out, "--ui", "127.0.0.1:0"},
		Stdout: &stdout, Stderr: &stderr, ReadFile: os.ReadFile, Version: "test",
		Getenv: func(k string) string {
			if k == uiTokenEnv {
				return token
			}
			return ""
		}}
	if code := Main(st); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "(token from $"+uiTokenEnv+")") {
		t.Errorf("stderr does not say where the token comes from:\n%s", stderr.String())
	}
	if strings.Contains(stdout.String()+stderr.String(), token) {
		t.Error("the token was printed")
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
}
