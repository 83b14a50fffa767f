package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// influxdPath finds Debian's influxd (package influxdb, 1.6), a test
// dependency scripts/install-test-deps.sh installs: missing is a failure.
func influxdPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("influxd")
	if err != nil {
		t.Fatal("influxd not found: run scripts/install-test-deps.sh (make test-deps) to install it")
	}
	return p
}

// startInfluxDB runs influxd on 127.0.0.1 with its files in a temporary
// directory and database db created, and returns its base URL.
func startInfluxDB(t *testing.T, db string) string {
	t.Helper()
	dir := t.TempDir()
	web := freePort(t)
	config := fmt.Sprintf(`reporting-disabled = true
bind-address = %q
[meta]
  dir = %q
[data]
  dir = %q
  wal-dir = %q
[monitor]
  store-enabled = false
[http]
  bind-address = %q
  log-enabled = false
`, freePort(t), filepath.Join(dir, "meta"), filepath.Join(dir, "data"), filepath.Join(dir, "wal"), web)
	cfg := filepath.Join(dir, "influxdb.conf")
	writeFile(t, cfg, config)
	cmd := exec.Command(influxdPath(t), "-config", cfg)
	return startDaemon(t, "influxd", cmd, filepath.Join(dir, "influxd.log"), "http://"+web, func(base string) bool {
		resp, err := http.PostForm(base+"/query", url.Values{"q": {"CREATE DATABASE " + db}})
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// influxSum is SELECT sum(field) over the run's series; ok is false
// while nothing is stored.
func influxSum(base, db, field string) (v float64, ok bool, err error) {
	q := fmt.Sprintf(`SELECT sum(%q) FROM %q`, field, "inferload_series")
	resp, err := http.Get(base + "/query?" + url.Values{"db": {db}, "q": {q}}.Encode())
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	var body struct {
		Results []struct {
			Error  string `json:"error"`
			Series []struct {
				Values [][]any `json:"values"`
			} `json:"series"`
		} `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, false, err
	}
	if len(body.Results) == 0 || body.Results[0].Error != "" {
		return 0, false, fmt.Errorf("query %s: %+v", q, body.Results)
	}
	s := body.Results[0].Series
	if len(s) == 0 || len(s[0].Values) == 0 {
		return 0, false, nil
	}
	f, _ := s[0].Values[0][1].(float64)
	return f, true, nil
}

// startStoppableRun runs `inferload run` for a minute with the live UI
// (its stop is how the test ends the run) plus extra flags, and returns
// the UI's address and the channel its exit code arrives on.
func startStoppableRun(t *testing.T, out string, extra ...string) (ui string, exit <-chan int) {
	t.Helper()
	chat := chatServer(t, 4, 5*time.Millisecond)
	ui = freePort(t)
	done := make(chan int, 1)
	go func() {
		code, _, stderr := runCLIEnv(t, map[string]string{uiTokenEnv: stopToken}, append([]string{"run", "--url", chat.URL + "/v1", "--concurrency", "2", "--duration", "60s",
			"--input-tokens", "8", "--output-tokens", "4", "--out", out, "-q", "--ui", ui}, extra...)...)
		if code != ExitInterrupted || strings.Contains(stderr, "warning") {
			t.Errorf("exit %d: %s", code, stderr)
		}
		done <- code
	}()
	return ui, done
}

// stopToken is the live UI's token of startStoppableRun's runs: stopping
// a run is a change, which needs it (docs/live.md).
const stopToken = "test-stop-token"

// waitDuringRun waits for cond, then checks that the run whose exit code
// arrives on exit is still going: what cond saw came during the run, not
// at its end.
func waitDuringRun(t *testing.T, exit <-chan int, what string, cond func() (bool, error)) {
	t.Helper()
	waitFor(t, what, cond)
	select {
	case <-exit:
		t.Fatal("the run ended before the check: the data was not seen during it")
	default:
	}
}

// stopRun stops the run through its live UI's API and waits for it.
func stopRun(t *testing.T, ui string, exit <-chan int) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+ui+"/api/stop", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+stopToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("POST /api/stop: %s; the run goes on to its end", resp.Status)
	}
	<-exit
}

// TestInfluxStreamDuringRun: --influx-stream posts the series to Debian's
// real InfluxDB while the run runs (queried back before it ends), and
// once it has ended InfluxDB holds every window of series.jsonl.
func TestInfluxStreamDuringRun(t *testing.T) {
	t.Parallel()
	influx := startInfluxDB(t, "load")
	out := t.TempDir()
	ui, exit := startStoppableRun(t, out, "--influx-stream", influx+"/write?db=load", "--influx-stream-interval", "300ms")
	waitDuringRun(t, exit, "completed requests in InfluxDB during the run", func() (bool, error) {
		v, ok, err := influxSum(influx, "load", "completed")
		return ok && v > 0, err
	})
	stopRun(t, ui, exit)
	var want int64
	if _, err := rundir.ReadSeries(filepath.Join(runDirIn(t, out), rundir.Series), func(w *record.Window) error {
		want += w.Completed
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, fmt.Sprintf("sum(completed) = %d, the series' total", want), func() (bool, error) {
		v, _, err := influxSum(influx, "load", "completed")
		return v == float64(want) && want > 0, err
	})
}

// TestRemoteWriteDuringRun: --remote-write pushes reach Debian's real
// Prometheus while the run runs, not only at its end.
func TestRemoteWriteDuringRun(t *testing.T) {
	t.Parallel()
	prom := startPrometheus(t, freePort(t), "--web.enable-remote-write-receiver")
	ui, exit := startStoppableRun(t, t.TempDir(), "--remote-write", prom+"/api/v1/write", "--remote-write-version", "1.0",
		"--remote-write-interval", "300ms")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitDuringRun(t, exit, "finished requests in Prometheus during the run", func() (bool, error) {
		v, ok, err := promQuery(ctx, prom, `sum(inferload_requests_total)`)
		return ok && v > 0, err
	})
	stopRun(t, ui, exit)
}

// waitFor polls cond every 100 ms for up to 30 s.
func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 30s", what)
		}
		time.Sleep(100 * time.Millisecond) // polling a server, not synchronising
	}
}
