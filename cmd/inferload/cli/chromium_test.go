package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferload/inferload/internal/browsertest"
)

// page is a tab of a headless chromium under test, with its console
// watched for checkConsole.
type page struct {
	t       *testing.T
	ctx     context.Context
	timeout time.Duration // how long poll waits
	console *browsertest.Console
}

// openPage starts chromium at path with a fresh tab and watches its
// console from before the first action (which starts the browser). poll
// waits up to timeout.
func openPage(t *testing.T, path string, timeout time.Duration) *page {
	t.Helper()
	tab := browsertest.Tab(t, path, 1400, 1000, 120*time.Second)
	return &page{t: t, ctx: tab, timeout: timeout, console: browsertest.Watch(tab)}
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
	if err := os.WriteFile(filepath.Join(browsertest.ArtifactDir(p.t), name), shot, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// checkConsole fails the test for each problem the page has logged.
func (p *page) checkConsole() {
	p.t.Helper()
	for _, msg := range p.console.Problems() {
		p.t.Errorf("page console: %s", msg)
	}
}
