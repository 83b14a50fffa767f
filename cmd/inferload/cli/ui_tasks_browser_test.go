package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// tasksUIPlan is a graph class on the simulator: a plan call offering a
// tool (the simulator calls it, so the tool runs), two researchers, an
// answer; a generous SLO so every task meets it.
const tasksUIPlan = `
target: {url: %s}
load: {concurrency: 2, duration: 60s}
workload:
  classes:
    - name: agent
      weight: 1
      input_tokens: 16
      output_tokens: 8
      slo: e2e <= 60s
      graph:
        - {name: plan, api: chat, tools: [{type: function, function: {name: search, parameters: {type: object}}}]}
        - {name: search, after: [plan], tool: {latency: 2ms, result_tokens: 10, on_tool_call: true}}
        - {name: research, api: chat, after: [plan], count: 2}
        - {name: answer, api: chat, after: [research, search]}
`

// TestLiveUITasksInBrowser: a run of graph tasks on the simulator shows
// a Tasks table on the live page: the class's row (tasks growing, a time
// to finish, 5 calls a task, task goodput) and one row per node in the
// graph's order (research's two copies in one row, twice the calls).
func TestLiveUITasksInBrowser(t *testing.T) {
	t.Parallel()
	_, url := startSim(t)
	planFile := filepath.Join(t.TempDir(), "graph.yaml")
	if err := os.WriteFile(planFile, []byte(fmt.Sprintf(tasksUIPlan, url)), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startLiveRun(t, "-f", planFile)
	pg := r.pg
	pg.do(chromedp.Navigate(r.printed))
	// Rows: the class, then plan, search, research, answer. Columns:
	// name, tasks/calls, failed, p50, p90, calls/task, task goodput.
	row := `document.querySelectorAll('#tasks tbody tr')`
	pg.poll(`!document.getElementById('tasks-box').hidden && ` + row + `.length === 5 && Number(` + row + `[0].cells[1].textContent) > 0`)
	rows := pg.eval(`Array.from(` + row + `).map(function (r) { return Array.from(r.cells).map(function (c) { return c.textContent; }).join('|'); }).join('\n')`)
	lines := strings.Split(rows, "\n")
	class := strings.Split(lines[0], "|")
	if len(class) != 7 || class[0] != "agent" || class[2] != "0" || class[3] == "–" || class[5] != "5.0" || !strings.HasSuffix(class[6], "(100%)") {
		t.Errorf("class row %q: want agent, no failures, a time to finish, 5.0 calls a task, every task met", lines[0])
	}
	for k, want := range []string{"plan (chat)", "search (tool)", "research (chat)", "answer (chat)"} {
		f := strings.Split(lines[k+1], "|")
		if !strings.HasSuffix(f[0], want) || f[3] == "–" {
			t.Errorf("node row %d %q: want %s with a latency", k, lines[k+1], want)
		}
	}
	if r, p := strings.Split(lines[3], "|")[1], strings.Split(lines[1], "|")[1]; r == p {
		t.Errorf("research started %s calls, plan %s: want twice as many (two copies)", r, p)
	}
	r.stop(t)
}
