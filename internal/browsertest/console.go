package browsertest

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// Console collects what a tab's page logs as an error, an exception or a
// warning: a page under test must log none.
type Console struct {
	mu       sync.Mutex
	problems []string
	done     chan struct{} // closed once the watch ends
}

// sentinel is what Settle logs to know every earlier message was seen.
const sentinel = "inferload-test-end"

// Watch collects tab's console problems until the tab closes or Settle's
// sentinel arrives. Call it before the tab's first action, so that the
// page's first messages are seen.
func Watch(tab context.Context) *Console {
	c := &Console{done: make(chan struct{})}
	msgs := chromedp.Console(tab)
	go func() {
		defer close(c.done)
		for m, err := range msgs {
			if err != nil || m.Text == sentinel {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() || m.Type == chromedp.ConsoleWarning {
				c.mu.Lock()
				c.problems = append(c.problems, m.String())
				c.mu.Unlock()
			}
		}
	}()
	return c
}

// Problems are the problems seen so far.
func (c *Console) Problems() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.problems...)
}

// Settle logs the sentinel in tab and waits until the watch has seen it,
// so that every message logged before is counted, and returns the
// problems; it ends the watch.
func (c *Console) Settle(tab context.Context) ([]string, error) {
	if _, err := chromedp.Run(tab, chromedp.Evaluate[any]("console.log('"+sentinel+"')")); err != nil {
		return nil, err
	}
	select {
	case <-c.done:
	case <-tab.Done():
		return nil, errors.New("console sentinel never arrived")
	}
	return c.Problems(), nil
}

// ArtifactDir is where browser screenshots and kept pages go:
// $TEST_ARTIFACTS when set (CI uploads it), else the test's temp dir.
func ArtifactDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("TEST_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}
