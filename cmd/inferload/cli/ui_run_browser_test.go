package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferload/inferload/internal/browsertest"
)

// liveRun is `inferload run … --ui` running in-process, with a chromium
// page to drive its live UI.
type liveRun struct {
	pg      *page
	errb    *syncBuffer // the run's stderr
	done    chan int    // the exit code, once Main returns
	out     string      // the --out directory
	addr    string      // the UI's host:port
	printed string      // the URL the run printed, with its token
}

// startLiveRun starts `run` with args, quiet, without GPU sampling, into
// a temporary --out and with its UI on a free loopback port; opens
// chromium (not yet navigated) and waits for the run to print its UI's
// URL, which it does once it listens.
func startLiveRun(t *testing.T, args ...string) *liveRun {
	t.Helper()
	browser := browsertest.Path(t)
	r := &liveRun{errb: &syncBuffer{}, done: make(chan int, 1), out: t.TempDir(), addr: freePort(t)}
	st := &State{Args: append(append([]string{"run"}, args...), "--gpu=false", "--out", r.out, "-q", "--ui", r.addr),
		Stdout: &bytes.Buffer{}, Stderr: r.errb, Getenv: func(string) string { return "" }, ReadFile: os.ReadFile, Version: "test"}
	go func() { r.done <- Main(st) }()
	r.pg = openPage(t, browser, 30*time.Second)
	waitFor(t, "the live UI's URL", func() (bool, error) {
		_, rest, ok := strings.Cut(r.errb.String(), "live UI at ")
		r.printed, _, _ = strings.Cut(rest, "\n")
		return ok && strings.Contains(r.printed, "?token="), nil
	})
	return r
}

// stopped waits for the run to exit after the page's stop was clicked:
// with ExitInterrupted, as after Ctrl-C.
func (r *liveRun) stopped(t *testing.T) {
	t.Helper()
	if code := <-r.done; code != ExitInterrupted {
		t.Fatalf("exit %d after stop, want %d (interrupted, as Ctrl-C): %s", code, ExitInterrupted, r.errb.String())
	}
}

// stop clicks the page's stop, waits for the run to exit interrupted and
// checks that the page logged no error.
func (r *liveRun) stop(t *testing.T) {
	t.Helper()
	r.pg.do(chromedp.Click("#stop"))
	r.stopped(t)
	r.pg.checkConsole()
}
