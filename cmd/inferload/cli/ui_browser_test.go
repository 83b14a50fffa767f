package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
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
// the page, and the page logs no error. The simulator reasons (4 tokens
// a reply), so the input-length table shows its TTFO column, and no
// accuracy column, since nothing is graded. The screenshot is kept as a
// test artifact ($TEST_ARTIFACTS or the test's temp dir).
func TestLiveUIInBrowser(t *testing.T) {
	t.Parallel()
	prof, err := sim.LookupProfile(sim.DefaultProfile)
	if err != nil {
		t.Fatal(err)
	}
	prof.ReasoningLength = sim.LengthDist{Kind: "fixed", Mean: 4}
	s, err := sim.New(sim.Config{Profile: prof, Seed: 1, Speedup: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	var seen concurrencySeen
	target := httptest.NewServer(seen.wrap(s.Handler()))
	t.Cleanup(target.Close)

	r := startLiveRun(t, "--url", target.URL+"/v1", "--concurrency", "2", "--duration", "60s",
		"--input-tokens", "16", "--output-tokens", "16")
	pg, addr, printed := r.pg, r.addr, r.printed
	// Without the token the page shows the run, its controls off, and
	// says why.
	pg.do(chromedp.Navigate("http://" + addr + "/"))
	pg.poll(`document.getElementById('t-done').textContent !== '–' && !document.getElementById('locked-msg').hidden`)
	if v, _ := chromedp.Run(pg.ctx, chromedp.Evaluate[bool](`['set-load', 'level', 'pause', 'resume', 'stop', 'abort', 'note', 'add-note'].every(function (id) { return document.getElementById(id).disabled; })`)); !v {
		t.Error("a page opened without the token has its controls on")
	}
	// The printed URL: the controls come on.
	deadline := time.Now().Add(30 * time.Second)
	pg.do(chromedp.Navigate(printed))
	pg.poll(`document.getElementById('locked-msg').hidden && !document.getElementById('stop').disabled`)
	// The token left the address bar; the cookie carries it.
	pg.poll(`location.search.indexOf('token=') < 0`)
	pg.poll(`document.getElementById('t-done').textContent !== '–' && document.querySelectorAll('canvas').length >= 6`)
	// A reasoning model: the tables gain a TTFO column, with figures;
	// nothing is graded, so no accuracy column.
	pg.poll(`!document.querySelector('#buckets th.ttfo').hidden && document.querySelector('#buckets td.ttfo') !== null && document.querySelector('#buckets td.ttfo').textContent !== '–'`)
	if v, _ := chromedp.Run(pg.ctx, chromedp.Evaluate[bool](`document.querySelector('#buckets th.acc').hidden && document.querySelector('#buckets td.acc') === null`)); !v {
		t.Error("an accuracy column is shown for a run that graded nothing")
	}
	// No class holds conversations: no Sessions table.
	if v, _ := chromedp.Run(pg.ctx, chromedp.Evaluate[bool](`document.getElementById('sessions-box').hidden`)); !v {
		t.Error("a Sessions table is shown for a run without conversations")
	}
	// No class is a chain or graph: no Tasks table.
	if v, _ := chromedp.Run(pg.ctx, chromedp.Evaluate[bool](`document.getElementById('tasks-box').hidden`)); !v {
		t.Error("a Tasks table is shown for a run without chains or graphs")
	}
	first := pg.eval("document.getElementById('t-done').textContent")
	pg.poll(`document.getElementById('t-done').textContent !== ` + jsString(first))
	if seen.peak.Load() > 2 {
		t.Fatalf("the simulator saw %d concurrent requests from 2 users", seen.peak.Load())
	}

	// 6 users from the page: the simulator sees 6 at once.
	pg.do(chromedp.SetValue("#level", "6"), chromedp.Click("#set-load"))
	pg.poll(`document.getElementById('t-level').textContent === '6'`)
	for seen.peak.Load() < 6 {
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatalf("the simulator saw at most %d concurrent requests after 6 users were set", seen.peak.Load())
		}
		time.Sleep(20 * time.Millisecond) // reading a counter, not synchronising
	}

	// A note with planted markup: shown as text, never run.
	note := plantedNote
	pg.do(chromedp.SendKeys("#note", note), chromedp.Click("#add-note"))
	pg.poll(`document.getElementById('events').textContent.indexOf('OOM in the server log') >= 0`)
	if v, _ := chromedp.Run(pg.ctx, chromedp.Evaluate[bool](`window.pwned === undefined && document.querySelector('#events img') === null`)); !v {
		t.Error("the planted note ran or became markup on the page")
	}

	// Stop: the run ends with its summary on the page.
	pg.do(chromedp.Click("#stop"))
	pg.poll(`!document.getElementById('final').hidden && document.getElementById('final-text').textContent.indexOf('succeeded') >= 0`)
	r.stopped(t)
	pg.screenshot("live-ui.png")
	pg.checkConsole()

	dir := runDirIn(t, r.out)
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
