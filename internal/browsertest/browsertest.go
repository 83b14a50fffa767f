// Package browsertest starts the headless chromium that the browser
// tests of report (the HTML report) and the CLI (the live UI, the
// launcher, the collector's page) drive, one way for both.
package browsertest

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Path finds Debian's chromium. A missing browser is a failure, in CI and
// out: scripts/install-test-deps.sh (run by `make test`) installs it, and
// the pages are only proven in a real browser.
func Path(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium not found: run scripts/install-test-deps.sh (make test does)")
	return ""
}

// Tab starts the headless chromium at path with a fresh profile, no
// background network and a width×height window, for at most timeout and
// the test's duration, and returns a tab. The browser starts with the
// tab's first action.
func Tab(t testing.TB, path string, width, height int, timeout time.Duration) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height),
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	tab, tcancel := chromedp.NewContext(actx)
	t.Cleanup(tcancel)
	return tab
}
