package cli

import (
	"bytes"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferload/inferload/internal/browsertest"
	"github.com/inferload/inferload/sim"
)

// TestLiveUISessionsInBrowser: a run of 3-turn conversations on the
// simulator shows a Sessions table on the live page, one row for the
// conversational class, whose completed conversations grow and whose
// time to finish and calls per conversation (3) are filled in.
func TestLiveUISessionsInBrowser(t *testing.T) {
	t.Parallel()
	browser := browsertest.Path(t)
	s, err := sim.New(sim.Config{Seed: 1, Speedup: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	target := httptest.NewServer(s.Handler())
	t.Cleanup(target.Close)

	addr, out := freePort(t), t.TempDir()
	var errb syncBuffer
	st := &State{Args: []string{"run", "--url", target.URL + "/v1", "--concurrency", "2", "--duration", "60s",
		"--class", "name=chat,weight=1,input_tokens=16,output_tokens=8,turns=3", "--gpu=false", "--out", out, "-q", "--ui", addr},
		Stdout: &bytes.Buffer{}, Stderr: &errb, Getenv: func(string) string { return "" }, ReadFile: os.ReadFile, Version: "test"}
	done := make(chan int, 1)
	go func() { done <- Main(st) }()

	pg := openPage(t, browser, 30*time.Second)
	var printed string
	waitFor(t, "the live UI's URL", func() (bool, error) {
		_, rest, ok := strings.Cut(errb.String(), "live UI at ")
		printed, _, _ = strings.Cut(rest, "\n")
		return ok && strings.Contains(printed, "?token="), nil
	})
	pg.do(chromedp.Navigate(printed))
	// Columns: class, turns, completed, failed, incomplete, p50, p90, calls.
	row := `document.querySelectorAll('#sessions tbody tr')`
	pg.poll(`!document.getElementById('sessions-box').hidden && ` + row + `.length === 1 && Number(` + row + `[0].cells[2].textContent) > 0`)
	cells := pg.eval(`Array.from(` + row + `[0].cells).map(function (c) { return c.textContent; }).join('|')`)
	f := strings.Split(cells, "|")
	if len(f) != 9 || f[0] != "chat" || f[1] != "3" || f[5] == "–" || f[7] != "3.0" {
		t.Errorf("sessions row %q: want chat, 3 turns, a time to finish, 3.0 calls a conversation", cells)
	}
	pg.do(chromedp.Click("#stop"))
	if code := <-done; code != ExitInterrupted {
		t.Fatalf("exit %d after stop, want %d: %s", code, ExitInterrupted, errb.String())
	}
	pg.checkConsole()
}
