package cli

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferload/inferload/internal/browsertest"
)

// page is a tab of a headless chromium under test. It keeps what the page
// logs as an error, an exception or a warning, for checkConsole.
type page struct {
	t       *testing.T
	ctx     context.Context
	timeout time.Duration // how long poll waits

	mu       sync.Mutex
	problems []string
}

// openPage starts chromium at path with a fresh tab and watches its
// console from before the first action (which starts the browser). poll
// waits up to timeout.
func openPage(t *testing.T, path string, timeout time.Duration) *page {
	t.Helper()
	p := &page{t: t, ctx: browsertest.Tab(t, path, 1400, 1000, 120*time.Second), timeout: timeout}
	msgs := chromedp.Console(p.ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() || m.Type == chromedp.ConsoleWarning {
				p.mu.Lock()
				p.problems = append(p.problems, m.String())
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// do runs the steps; a failure ends the test.
func (p *page) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		p.t.Fatal(err)
	}
}

// poll waits for js to hold.
func (p *page) poll(js string) {
	p.t.Helper()
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[any](js, chromedp.WithPollingTimeout(p.timeout))); err != nil {
		p.t.Fatalf("waiting for %s: %v", js, err)
	}
}

// eval returns js's value, a string.
func (p *page) eval(js string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		p.t.Fatal(err)
	}
	return v
}

// screenshot keeps the whole page as name, a test artifact.
func (p *page) screenshot(name string) {
	p.t.Helper()
	shot, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(artifactDir(p.t), name), shot, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// checkConsole fails the test for each problem the page has logged.
func (p *page) checkConsole() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, msg := range p.problems {
		p.t.Errorf("page console: %s", msg)
	}
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
