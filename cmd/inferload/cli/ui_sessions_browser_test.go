package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestLiveUISessionsInBrowser: a run of 3-turn conversations on the
// simulator shows a Sessions table on the live page, one row for the
// conversational class, whose completed conversations grow and whose
// time to finish, calls per conversation (3) and session goodput (per
// second and its share, as the Tasks table shows task goodput) are
// filled in.
func TestLiveUISessionsInBrowser(t *testing.T) {
	t.Parallel()
	_, url := startSim(t)
	r := startLiveRun(t, "--url", url, "--concurrency", "2", "--duration", "60s",
		"--class", "name=chat,weight=1,input_tokens=16,output_tokens=8,turns=3")
	pg := r.pg
	pg.do(chromedp.Navigate(r.printed))
	// Columns: class, turns, completed, failed, incomplete, p50, p90, calls, goodput.
	row := `document.querySelectorAll('#sessions tbody tr')`
	pg.poll(`!document.getElementById('sessions-box').hidden && ` + row + `.length === 1 && Number(` + row + `[0].cells[2].textContent) > 0`)
	cells := pg.eval(`Array.from(` + row + `[0].cells).map(function (c) { return c.textContent; }).join('|')`)
	f := strings.Split(cells, "|")
	if len(f) != 9 || f[0] != "chat" || f[1] != "3" || f[5] == "–" || f[7] != "3.0" || !goodputCell.MatchString(f[8]) {
		t.Errorf("sessions row %q: want chat, 3 turns, a time to finish, 3.0 calls a conversation, goodput as N/s (P%%)", cells)
	}
	r.stop(t)
}

// goodputCell is a goodput cell of the live page: per second, then the
// share that met the SLO.
var goodputCell = regexp.MustCompile(`^\d+\.\d\d/s \(\d+%\)$`)
