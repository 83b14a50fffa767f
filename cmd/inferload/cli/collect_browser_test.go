package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferload/inferload/distributed"
	"github.com/inferload/inferload/record"

	"github.com/inferload/inferload/internal/browsertest"
)

// TestCollectorUIInBrowser drives the collector's live page in Debian's
// chromium while two segment processes feed it from the simulator: the
// segment table shows both running with their own counts, the merged
// tiles move, the controls are off with the reason and the API refuses
// pause and stop with 409 (401 without the UI's token), and once the segments are done the page shows
// the merged summary, whose request count is the page's completed tile
// and the sum of the segment rows, and whose sessions and tasks are the
// page's Sessions and Tasks tables, task goodput judged by the plan's SLO. The page logs no error; the
// collector's terminal shows the segments' changes and the whole run's
// progress line.
func TestCollectorUIInBrowser(t *testing.T) {
	t.Parallel()
	browser := browsertest.Path(t)
	_, simURL := startSim(t)

	work := t.TempDir()
	planFile := filepath.Join(work, "plan.yaml")
	plan := fmt.Sprintf(`name: cluster-ui
target: {url: %s}
load: {concurrency: 4, duration: 8s}
workload:
  slo: {ttft_ms: 2000}
  classes:
    - {name: chat, weight: 1, input_tokens: "16", output_tokens: "16", turns: 2}
    - name: rag
      weight: 1
      input_tokens: "16"
      output_tokens: "8"
      chain:
        - {api: chat, name: draft}
        - {api: chat, name: answer}
observe: {gpu: false, scrape: "off"}
`, simURL)
	writeFile(t, planFile, plan)
	addrFile, uiAddr := filepath.Join(work, "addr"), freePort(t)
	type result struct {
		code           int
		stdout, stderr string
	}
	const token = "collect-ui-token-1234"
	done := make(chan result, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		st := &State{Args: []string{"collect", "--listen", "127.0.0.1:0", "--addr-file", addrFile, "--segments", "2",
			"--dir", filepath.Join(work, "gathered"), "--out", filepath.Join(work, "merged"), "--ui", uiAddr, "-o", "json"},
			Stdout: &stdout, Stderr: &stderr, ReadFile: os.ReadFile, Version: "test",
			Getenv: func(k string) string {
				if k == uiTokenEnv {
					return token
				}
				return ""
			}}
		code := Main(st)
		done <- result{code, stdout.String(), stderr.String()}
	}()
	url := "http://" + strings.TrimSpace(string(waitForPath(t, addrFile)))

	pg := openPage(t, browser, 60*time.Second)
	pg.do(chromedp.Navigate("http://" + uiAddr + "/?token=" + token))
	// The page is up before any segment: both wait.
	rows := `Array.from(document.querySelectorAll('#segments tbody tr'))`
	pg.poll(rows + `.length === 2 && ` + rows + `.every(function (r) { return r.cells[1].textContent === 'waiting'; })`)
	for i := range 2 {
		startChildArgs(t, "run", "-f", planFile, "--segment", fmt.Sprintf("%d/2", i), "--collector", url,
			"--collector-token-file", filepath.Join(work, "gathered", distributed.TokenFile), "--out", filepath.Join(work, fmt.Sprint("shard-", i)), "-q")
	}
	// Both segments running, each with requests of its own, and the tiles
	// counting them.
	pg.poll(rows + `.every(function (r) { return r.cells[1].textContent === 'running' && Number(r.cells[2].textContent) > 0; })`)
	pg.poll(`Number(document.getElementById('t-done').textContent.split(' / ')[0]) > 0`)

	// The controls are off, with the reason (not the lock: the page has
	// the token); the API says 409 with the token, 401 without.
	if pg.eval(`String(document.getElementById('stop').disabled && document.getElementById('pause').disabled && document.getElementById('locked-msg').hidden)`) != "true" {
		t.Error("stop and pause are enabled on a collector's page, or it says it is locked")
	}
	if msg := pg.eval(`document.getElementById('control-msg').textContent`); !strings.Contains(msg, "not steered from its collector") {
		t.Errorf("control message %q: want the reason", msg)
	}
	for path, body := range map[string]string{"pause": `{}`, "stop": `{}`, "abort": `{}`, "load": `{"level": 3}`, "note": `{"text": "x"}`} {
		for _, auth := range []string{"Bearer " + token, ""} {
			req, _ := http.NewRequest("POST", "http://"+uiAddr+"/api/"+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if auth == "" && resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("POST /api/%s without the token: %s %s, want 401", path, resp.Status, got)
			}
			if auth != "" && (resp.StatusCode != http.StatusConflict || !strings.Contains(string(got), "not steered from its collector")) {
				t.Errorf("POST /api/%s: %s %s, want 409 with the reason", path, resp.Status, got)
			}
		}
	}

	// The end: the merged summary on the page, the same count as the tiles.
	pg.poll(`!document.getElementById('final').hidden && document.getElementById('final-text').textContent.indexOf('succeeded') >= 0`)
	res := <-done
	if res.code != 0 {
		t.Fatalf("collector exit %d: %s", res.code, res.stderr)
	}
	var sum record.Summary
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatalf("collector output: %v\n%s", err, res.stdout)
	}
	// The terminal: each segment's changes, and the whole run's line.
	for _, want := range []string{"segment 0/2 running", "segment 1/2 done", " req/s ", "TTFT p50"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("the collector's terminal lacks %q:\n%s", want, res.stderr)
		}
	}
	tile := strings.Split(pg.eval(`document.getElementById('t-done').textContent`), " / ")[0]
	var rowSum int64
	for i := range 2 {
		n, _ := strconv.ParseInt(pg.eval(fmt.Sprintf(`document.querySelectorAll('#segments tbody tr')[%d].cells[2].textContent`, i)), 10, 64)
		rowSum += n
	}
	if want := strconv.FormatInt(sum.Requests.Total, 10); tile != want || rowSum != sum.Requests.Total || sum.Requests.Total == 0 {
		t.Errorf("page: %s completed, segment rows %d; merged summary %d requests: want all equal", tile, rowSum, sum.Requests.Total)
	}
	checkCollectorTables(t, pg, &sum)
	pg.screenshot("collector-ui.png")
	pg.checkConsole()
}

// checkCollectorTables: the collector's Sessions and Tasks tables, once
// every record is in, hold the merged summary's conversations and tasks,
// the task goodput judged by the plan's SLO as summary.json judges it.
func checkCollectorTables(t *testing.T, pg *page, sum *record.Summary) {
	t.Helper()
	chat, rag := sum.Sessions["chat"], sum.Chains["rag"]
	if chat == nil || rag == nil || rag.Goodput == nil || chat.Completed == 0 || rag.Chains == 0 {
		t.Fatalf("merged summary: sessions %+v, tasks %+v: want conversations and judged tasks", chat, rag)
	}
	cells := func(table string) []string {
		return strings.Split(pg.eval(`Array.from(document.querySelectorAll('#`+table+` tbody tr')[0].cells).map(function (c) { return c.textContent; }).join('|')`), "|")
	}
	// Sessions: class, turns, completed, failed, incomplete, ...
	if pg.eval(`String(document.getElementById('sessions-box').hidden)`) != "false" {
		t.Fatal("the collector's page shows no Sessions table")
	}
	if s := cells("sessions"); len(s) < 5 || s[0] != "chat" || s[1] != "2" || s[2] != strconv.FormatInt(chat.Completed, 10) || s[3] != strconv.FormatInt(chat.Failed, 10) {
		t.Errorf("sessions row %q: want chat, 2 turns, the merged %d completed and %d failed", s, chat.Completed, chat.Failed)
	}
	// Tasks: class, tasks, failed, p50, p90, calls/task, goodput.
	if pg.eval(`String(document.getElementById('tasks-box').hidden)`) != "false" {
		t.Fatal("the collector's page shows no Tasks table")
	}
	want := fmt.Sprintf("(%.0f%%)", 100*rag.Goodput.Attainment)
	if c := cells("tasks"); len(c) < 7 || c[0] != "rag" || c[1] != strconv.FormatInt(rag.Chains, 10) || !strings.HasSuffix(c[6], want) {
		t.Errorf("tasks row %q: want rag, the merged %d tasks, goodput ending %s", c, rag.Chains, want)
	}
}
