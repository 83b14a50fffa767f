package cli

import (
	"bytes"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/sim"

	"github.com/inferload/inferload/internal/browsertest"
)

// TestUICommandInBrowser drives `inferload ui` in Debian's chromium: a
// run composed on the page against the simulator starts, its live page
// updates, stop ends it with a link to its report.html, which opens, and
// the launcher lists the run directory with that link. Ctrl-C ends the
// command. The page logs no error.
func TestUICommandInBrowser(t *testing.T) {
	t.Parallel()
	browser := browsertest.Path(t)
	_, simURL := startSim(t)
	// The launcher needs its token on loopback too: open the URL it printed.
	printed := startUICommand(t, "--out", t.TempDir())
	launcher, err := url.Parse(printed)
	if err != nil || launcher.Query().Get("token") == "" {
		t.Fatalf("printed %q: want the URL with its token (%v)", printed, err)
	}

	pg := openPage(t, browser, 30*time.Second)
	// poll waits for js to hold; a navigation while it waits (the page
	// moving to the live view or the report) restarts the wait.
	poll := func(js string) {
		t.Helper()
		for try := 0; ; try++ {
			_, err := chromedp.Run(pg.ctx, chromedp.Poll[any](js, chromedp.WithPollingTimeout(pg.timeout)))
			if err == nil {
				return
			}
			if try == 3 || !strings.Contains(err.Error(), "navigated") && !strings.Contains(err.Error(), "context with specified id") {
				t.Fatalf("waiting for %s: %v", js, err)
			}
		}
	}
	pg.do(chromedp.Navigate(printed),
		chromedp.SetValue("#url", simURL), chromedp.SetValue("#level", "2"), chromedp.SetValue("#duration", "60s"),
		chromedp.SetValue("#input_tokens", "16"), chromedp.SetValue("#output_tokens", "16"),
		chromedp.Click("#start"))
	poll(`location.pathname === '/live/' && document.getElementById('t-done') && /^[1-9]/.test(document.getElementById('t-done').textContent)`)
	pg.do(chromedp.Click("#stop"))
	poll(`document.getElementById('report-link') !== null`)
	pg.do(chromedp.Click("#report-link"))
	poll(`location.pathname.endsWith('/report.html') && document.querySelector('footer') !== null`)
	pg.do(chromedp.Navigate("http://" + launcher.Host + "/"))
	poll(`document.querySelectorAll('#runs tbody a').length === 1`)
	pg.checkConsole()
	// startUICommand's cleanup checks that Ctrl-C ends the command.
}

// startSim starts the simulator at 20× speed on 127.0.0.1 and returns it
// with its URL (…/v1).
func startSim(t *testing.T) (*sim.Server, string) {
	t.Helper()
	return enginetest.StartSim(t, sim.Config{Seed: 1, Speedup: 20})
}

// syncBuffer is a bytes.Buffer safe to read while a command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
