package live

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeLauncher starts runs that go on until the test finishes them.
type fakeLauncher struct {
	dir     string
	started []RunRequest
	mon     *Monitor
}

func (l *fakeLauncher) Start(req RunRequest) (*Monitor, Control, error) {
	if req.URL == "" {
		return nil, nil, errors.New("target.url is required")
	}
	l.started = append(l.started, req)
	l.mon = NewMonitor(MonitorOptions{})
	l.mon.Start("runs/a", 0)
	return l.mon, &fakeControl{level: req.Level}, nil
}

func (l *fakeLauncher) Runs() ([]RunEntry, error) {
	return []RunEntry{{Name: "a", Report: "runs/a/report.html"}}, nil
}

func (l *fakeLauncher) ReportPath(name string) (string, error) {
	return filepath.Join(l.dir, name, "report.html"), nil
}

// TestLauncher: the launcher starts one run at a time, shows it at
// /live/, lists runs, and serves report.html files of run directories
// only, offline.
func TestLauncher(t *testing.T) {
	t.Parallel()
	l := &fakeLauncher{dir: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(l.dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.dir, "a", "report.html"), []byte("<html>report</html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := ServeLauncher("127.0.0.1:0", l, UIOptions{})
	if err == nil && srv.Token() == "" {
		t.Fatal("a launcher on loopback without a token: it reads files and starts runs")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	}()
	base := "http://" + srv.Addr()
	auth := map[string]string{"Authorization": "Bearer " + srv.Token()}
	if resp, _ := do(t, "GET", base+"/api/runs", "", nil); resp.StatusCode != 401 {
		t.Errorf("the run list without the token: %d, want 401", resp.StatusCode)
	}
	tests := []struct {
		name, method, path, body string
		code                     int
		want                     string
	}{
		// Before any run: the launcher page, and no live state.
		{"page", "GET", "/", "", 200, `id="run-form"`},
		{"no run yet", "GET", "/live/api/state", "", 404, "no run"},
		{"list", "GET", "/api/runs", "", 200, `"live":false,"running":false,"runs":[{"name":"a","report":"runs/a/report.html"}]`},
		// A request the launcher refuses says why.
		{"bad request", "POST", "/api/runs", `{"level": 2}`, 400, "target.url"},
		{"start", "POST", "/api/runs", `{"url": "http://127.0.0.1:1/v1", "mode": "users", "level": 3}`, 202, `"live":"live/"`},
		{"live state", "GET", "/live/api/state", "", 200, `"level":3`},
		{"live page", "GET", "/live/", "", 200, `id="t-done"`},
		// One run at a time.
		{"second start", "POST", "/api/runs", `{"url": "http://127.0.0.1:1/v1"}`, 409, "going on"},
		{"report", "GET", "/runs/a/report.html", "", 200, "report"},
		{"traversal", "GET", "/runs/..%2f..%2fetc/report.html", "", 404, ""},
		{"dot dir", "GET", "/runs/../report.html", "", 404, ""},
	}
	for _, tt := range tests {
		resp, body := do(t, tt.method, base+tt.path, tt.body, auth)
		if resp.StatusCode != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %.200q, want %d containing %q", tt.name, resp.StatusCode, body, tt.code, tt.want)
		}
		if tt.name == "report" && !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("report.html served without an offline CSP: %q", resp.Header.Get("Content-Security-Policy"))
		}
	}
	l.mon.Finish(Final{Dir: "runs/a"})
	if resp, _ := do(t, "POST", base+"/api/runs", `{"url": "http://127.0.0.1:1/v1"}`, auth); resp.StatusCode != 202 || len(l.started) != 2 {
		t.Errorf("a run after the first finished: %d, %d started", resp.StatusCode, len(l.started))
	}
}
