package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
)

// concurrencySeen counts the generation requests the simulator is
// serving at once, and the most since the last reset.
type concurrencySeen struct {
	now, peak atomic.Int64
}

func (c *concurrencySeen) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/completions") {
			h.ServeHTTP(w, r)
			return
		}
		n := c.now.Add(1)
		for p := c.peak.Load(); n > p && !c.peak.CompareAndSwap(p, n); p = c.peak.Load() {
		}
		defer c.now.Add(-1)
		h.ServeHTTP(w, r)
	})
}

// TestLiveUIInBrowser drives the live page of a real run on the
// simulator in Debian's chromium: opened without the token the page
// shows the run with its controls off and says why; opened at the
// printed URL, with the token, the tiles change between two reads, 6
// users set on the page are 6 concurrent requests at the simulator, a
// note typed on the page (with markup planted in it) shows as text in
// the events and in report.html, stop ends the run with its summary on
// the page, and the page logs no error. The screenshot is kept as a test
// artifact ($TEST_ARTIFACTS or the test's temp dir).
func TestLiveUIInBrowser(t *testing.T) {
	t.Parallel()
	browser := chromiumPath(t)
	s, err := sim.New(sim.Config{Seed: 1, Speedup: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	var seen concurrencySeen
	target := httptest.NewServer(seen.wrap(s.Handler()))
	t.Cleanup(target.Close)

	addr, out := freePort(t), t.TempDir()
	var errb syncBuffer
	st := &State{Args: []string{"run", "--url", target.URL + "/v1", "--concurrency", "2", "--duration", "60s",
		"--input-tokens", "16", "--output-tokens", "16", "--gpu=false", "--out", out, "-q", "--ui", addr},
		Stdout: &bytes.Buffer{}, Stderr: &errb, Getenv: func(string) string { return "" }, ReadFile: os.ReadFile, Version: "test"}
	done := make(chan int, 1)
	go func() { done <- Main(st) }()

	ctx := chromiumTab(t, browser)
	var mu sync.Mutex
	var problems []string
	msgs := chromedp.Console(ctx) // before the first action: it starts the browser
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() || m.Type == chromedp.ConsoleWarning {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	poll := func(js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[any](js, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("waiting for %s: %v", js, err)
		}
	}
	text := func(id string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.getElementById('"+id+"').textContent"))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// The run prints its URL, with its token, once it listens.
	var printed string
	waitFor(t, "the live UI's URL", func() (bool, error) {
		_, rest, ok := strings.Cut(errb.String(), "live UI at ")
		printed, _, _ = strings.Cut(rest, "\n")
		return ok && strings.Contains(printed, "?token="), nil
	})
	// Without the token the page shows the run, its controls off, and
	// says why.
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+addr+"/")); err != nil {
		t.Fatal(err)
	}
	poll(`document.getElementById('t-done').textContent !== '–' && !document.getElementById('locked-msg').hidden`)
	if v, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`['set-load', 'level', 'pause', 'resume', 'stop', 'abort', 'note', 'add-note'].every(function (id) { return document.getElementById(id).disabled; })`)); !v {
		t.Error("a page opened without the token has its controls on")
	}
	// The printed URL: the controls come on.
	deadline := time.Now().Add(30 * time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate(printed)); err != nil {
		t.Fatal(err)
	}
	poll(`document.getElementById('locked-msg').hidden && !document.getElementById('stop').disabled`)
	// The token left the address bar; the cookie carries it.
	poll(`location.search.indexOf('token=') < 0`)
	poll(`document.getElementById('t-done').textContent !== '–' && document.querySelectorAll('canvas').length >= 6`)
	first := text("t-done")
	poll(`document.getElementById('t-done').textContent !== ` + jsString(first))
	if seen.peak.Load() > 2 {
		t.Fatalf("the simulator saw %d concurrent requests from 2 users", seen.peak.Load())
	}

	// 6 users from the page: the simulator sees 6 at once.
	if err := chromedp.Do(ctx, chromedp.SetValue("#level", "6"), chromedp.Click("#set-load")); err != nil {
		t.Fatal(err)
	}
	poll(`document.getElementById('t-level').textContent === '6'`)
	for seen.peak.Load() < 6 {
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatalf("the simulator saw at most %d concurrent requests after 6 users were set", seen.peak.Load())
		}
		time.Sleep(20 * time.Millisecond) // reading a counter, not synchronising
	}

	// A note with planted markup: shown as text, never run.
	note := plantedNote
	if err := chromedp.Do(ctx, chromedp.SendKeys("#note", note), chromedp.Click("#add-note")); err != nil {
		t.Fatal(err)
	}
	poll(`document.getElementById('events').textContent.indexOf('OOM in the server log') >= 0`)
	if v, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.pwned === undefined && document.querySelector('#events img') === null`)); !v {
		t.Error("the planted note ran or became markup on the page")
	}

	// Stop: the run ends with its summary on the page.
	if err := chromedp.Do(ctx, chromedp.Click("#stop")); err != nil {
		t.Fatal(err)
	}
	poll(`!document.getElementById('final').hidden && document.getElementById('final-text').textContent.indexOf('succeeded') >= 0`)
	if code := <-done; code != ExitInterrupted {
		t.Fatalf("exit %d after stop, want %d (interrupted, as Ctrl-C): %s", code, ExitInterrupted, errb.String())
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(artifactDir(t), "live-ui.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	for _, p := range problems {
		t.Errorf("page console: %s", p)
	}
	mu.Unlock()

	dir := runDirIn(t, out)
	sum, err := rundir.ReadSummary(filepath.Join(dir, rundir.Summary))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Steps) != 2 || sum.Steps[0].Target != 2 || sum.Steps[1].Target != 6 || !sum.Interrupted {
		t.Errorf("steps %+v interrupted %v: want 2 then 6 users, interrupted", stepTargets(sum.Steps), sum.Interrupted)
	}
	html, err := os.ReadFile(filepath.Join(dir, rundir.Report))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "OOM in the server log") || strings.Contains(string(html), "<img src=x") {
		t.Error("report.html lacks the note, or holds its markup unescaped")
	}
}

// plantedNote is a note carrying markup, as a careless paste would.
const plantedNote = `<img src=x onerror="window.pwned=1"> OOM in the server log`

func stepTargets(steps []record.Step) []float64 {
	var out []float64
	for _, s := range steps {
		out = append(out, s.Target)
	}
	return out
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// chromiumPath finds Debian's chromium; a missing browser is a failure
// (scripts/install-test-deps.sh installs it), in CI and out.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium not found: run scripts/install-test-deps.sh (make test does)")
	return ""
}

// chromiumTab starts a headless chromium with a fresh profile and no
// background network, and returns a tab.
func chromiumTab(t *testing.T, path string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	tab, tcancel := chromedp.NewContext(actx)
	t.Cleanup(tcancel)
	return tab
}

// artifactDir is $TEST_ARTIFACTS when set (CI uploads it), else the
// test's temp dir.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("TEST_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}
