package cli

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferload/inferload/sim"
)

// TestUICommandInBrowser drives `inferload ui` in Debian's chromium: a
// run composed on the page against the simulator starts, its live page
// updates, stop ends it with a link to its report.html, which opens, and
// the launcher lists the run directory with that link. Ctrl-C ends the
// command. The page logs no error.
func TestUICommandInBrowser(t *testing.T) {
	t.Parallel()
	browser := chromiumPath(t)
	_, simURL, err := startSim(t)
	if err != nil {
		t.Fatal(err)
	}
	addr, out := freePort(t), t.TempDir()
	sig := make(chan os.Signal, 1)
	var errb syncBuffer
	st := &State{Args: []string{"ui", "--listen", addr, "--out", out}, Stdout: &bytes.Buffer{}, Stderr: &errb,
		Getenv: func(string) string { return "" }, ReadFile: os.ReadFile, Signals: sig, Version: "test"}
	exit := make(chan int, 1)
	go func() { exit <- Main(st) }()

	ctx := chromiumTab(t, browser)
	msgs := chromedp.Console(ctx)
	var mu sync.Mutex
	var problems []string
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
	// poll waits for js to hold; a navigation while it waits (the page
	// moving to the live view or the report) restarts the wait.
	poll := func(js string) {
		t.Helper()
		for try := 0; ; try++ {
			_, err := chromedp.Run(ctx, chromedp.Poll[any](js, chromedp.WithPollingTimeout(30*time.Second)))
			if err == nil {
				return
			}
			if try == 3 || !strings.Contains(err.Error(), "navigated") && !strings.Contains(err.Error(), "context with specified id") {
				t.Fatalf("waiting for %s: %v", js, err)
			}
		}
	}
	// The launcher needs its token on loopback too: open the URL it printed.
	var printed string
	waitFor(t, "the ui command listening", func() (bool, error) {
		_, rest, ok := strings.Cut(errb.String(), "inferload ui at ")
		printed, _, _ = strings.Cut(rest, ";")
		return ok && strings.Contains(printed, "?token="), nil
	})
	if err := chromedp.Do(ctx, chromedp.Navigate(printed),
		chromedp.SetValue("#url", simURL), chromedp.SetValue("#level", "2"), chromedp.SetValue("#duration", "60s"),
		chromedp.SetValue("#input_tokens", "16"), chromedp.SetValue("#output_tokens", "16"),
		chromedp.Click("#start")); err != nil {
		t.Fatal(err)
	}
	poll(`location.pathname === '/live/' && document.getElementById('t-done') && /^[1-9]/.test(document.getElementById('t-done').textContent)`)
	if err := chromedp.Do(ctx, chromedp.Click("#stop")); err != nil {
		t.Fatal(err)
	}
	poll(`document.getElementById('report-link') !== null`)
	if err := chromedp.Do(ctx, chromedp.Click("#report-link")); err != nil {
		t.Fatal(err)
	}
	poll(`location.pathname.endsWith('/report.html') && document.querySelector('footer') !== null`)
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+addr+"/")); err != nil {
		t.Fatal(err)
	}
	poll(`document.querySelectorAll('#runs tbody a').length === 1`)
	mu.Lock()
	for _, p := range problems {
		t.Errorf("page console: %s", p)
	}
	mu.Unlock()
	sig <- os.Interrupt
	select {
	case code := <-exit:
		if code != ExitOK {
			t.Errorf("ui exit %d: %s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("inferload ui did not end on Ctrl-C")
	}
}

// startSim starts the simulator at 20× speed on 127.0.0.1.
func startSim(t *testing.T) (*sim.Server, string, error) {
	t.Helper()
	s, u, err := sim.Start(sim.Config{Seed: 1, Speedup: 20}, "127.0.0.1:0")
	if err == nil {
		t.Cleanup(s.Close)
	}
	return s, u, err
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
