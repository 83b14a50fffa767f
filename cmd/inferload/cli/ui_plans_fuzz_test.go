package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferload/inferload/live"
)

// FuzzLauncherPlan drives the real launcher's request resolution (what
// POST /api/runs does before a run starts) with any request body: no
// panic, and no error ever shows the text of a file, in the plan
// directories or out of them.
func FuzzLauncherPlan(f *testing.F) {
	plans, elsewhere := f.TempDir(), f.TempDir()
	secretFile := filepath.Join(elsewhere, "secret.yaml")
	must := func(err error) {
		if err != nil {
			f.Fatal(err)
		}
	}
	must(os.WriteFile(secretFile, []byte("SECRET0: x\n"), 0o600))
	must(os.WriteFile(filepath.Join(plans, "leaky.yaml"), []byte("SECRET1: x\nload:\n  concurrency: SECRET2\n  duration: 'SECRET3'\ntarget: {url: \"SECRET4\"}\n"), 0o600))
	must(os.WriteFile(filepath.Join(plans, "ok.yaml"), []byte("target: {url: http://127.0.0.1:1/v1}\n"), 0o600))
	must(os.Symlink(secretFile, filepath.Join(plans, "link.yaml")))
	for _, p := range []string{secretFile, "leaky.yaml", filepath.Join(plans, "leaky.yaml"), filepath.Join(plans, "link.yaml"),
		filepath.Join(plans, "ok.yaml"), plans + "/../" + filepath.Base(elsewhere) + "/secret.yaml", "/dev/zero", "/etc/passwd", ""} {
		b, _ := json.Marshal(live.RunRequest{Plan: p, URL: "http://127.0.0.1:1/v1", Mode: "users", Level: 2})
		f.Add(string(b))
	}
	f.Add(`{"plan": "` + filepath.Join(plans, "ok.yaml") + `", "mode": "rate", "level": 1e308, "duration": "SECRET5"}`)
	l := &launcher{st: &State{Getenv: func(string) string { return "" }}, out: f.TempDir(), planDirs: []string{plans}}
	f.Fuzz(func(t *testing.T, body string) {
		var req live.RunRequest
		if json.NewDecoder(bytes.NewReader([]byte(body))).Decode(&req) != nil {
			return
		}
		_, err := l.plan(req)
		if err == nil {
			return
		}
		for _, s := range []string{"SECRET0", "SECRET1", "SECRET2", "SECRET3", "SECRET4"} {
			if strings.Contains(err.Error(), s) && !strings.Contains(body, s) {
				t.Errorf("request %s: the error shows a file's text: %v", body, err)
			}
		}
	})
}
