package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/inferload/inferload/rundir"
)

// prometheusPath finds Debian's prometheus. It is a test dependency
// (scripts/install-test-deps.sh installs it), so a missing binary fails
// the test instead of skipping it, in CI and elsewhere.
func prometheusPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus not found: run scripts/install-test-deps.sh (make test-deps) to install it")
	}
	return p
}

// freePort reserves a port on 127.0.0.1 and releases it for the caller;
// Prometheus's config needs the address before the run listens on it.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startPrometheus runs prometheus on 127.0.0.1 with a temporary storage
// directory, scraping target every second, and returns its base URL once
// it is ready. It is stopped when the test ends. args are extra flags
// (the remote-write receiver).
func startPrometheus(t *testing.T, target string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: inferload
    static_configs:
      - targets: [%q]
`, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	writeFile(t, cfgPath, config)
	web := freePort(t)
	cmd := exec.Command(prometheusPath(t), append([]string{"--config.file=" + cfgPath, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + web, "--log.level=warn"}, args...)...)
	return startDaemon(t, "prometheus", cmd, filepath.Join(dir, "prometheus.log"), "http://"+web, func(base string) bool {
		resp, err := http.Get(base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// startDaemon starts a server the tests query (prometheus, influxd) with
// its output in logPath, stops it when the test ends (its log shown if the
// test failed), and waits up to 30 s for ready(base), failing at once if
// it exits first. It returns base.
func startDaemon(t *testing.T, name string, cmd *exec.Cmd, logPath, base string, ready func(base string) bool) string {
	t.Helper()
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("%s log:\n%s", name, b)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("%s exited (%v):\n%s", name, err, b)
		case <-time.After(100 * time.Millisecond):
		}
		if ready(base) {
			return base
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after 30s", name)
		}
	}
}

// waitForProm queries Prometheus at base until query gives want, which
// must be above 0 (an empty sum is no proof), or fails the test once ctx
// ends. A scraped or pushed sample is queryable a moment after it came.
func waitForProm(ctx context.Context, t *testing.T, base, query string, want float64) {
	t.Helper()
	for {
		v, ok, err := promQuery(ctx, base, query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if ok && v == want && want > 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s = %v (found %v), want %v", query, v, ok, want)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// promQuery evaluates an instant PromQL query returning one scalar-like
// sample; ok is false when the result is empty.
func promQuery(ctx context.Context, base, query string) (v float64, ok bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/query?query="+url.QueryEscape(query), nil)
	if err != nil {
		return 0, false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, false, fmt.Errorf("query %s: %w", query, err)
	}
	if body.Status != "success" {
		return 0, false, fmt.Errorf("query %s: %s", query, body.Error)
	}
	if len(body.Data.Result) == 0 {
		return 0, false, nil
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	v, err = strconv.ParseFloat(s, 64)
	return v, err == nil, err
}

// TestPrometheusScrapesLiveRun runs real Prometheus against a run's
// --serve-metrics endpoint and queries the data back through its HTTP API:
// the request and token counters Prometheus stored equal what the run
// recorded, and the latency histograms arrived.
func TestPrometheusScrapesLiveRun(t *testing.T) {
	t.Parallel()
	metricsAddr := freePort(t)
	prom := startPrometheus(t, metricsAddr)
	chat := chatServer(t, 4, 5*time.Millisecond)
	out := t.TempDir()
	code, _, stderr := runCLI(t, "run", "--url", chat.URL+"/v1", "--concurrency", "2", "--duration", "3s",
		"--input-tokens", "8", "--output-tokens", "4", "--out", out, "-q",
		"--serve-metrics", metricsAddr, "--serve-metrics-linger", "20s")
	if code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	s, err := rundir.ReadSummary(filepath.Join(runDirIn(t, out), rundir.Summary))
	if err != nil {
		t.Fatal(err)
	}
	// last_over_time ignores the staleness markers Prometheus writes once
	// the finished run's endpoint has gone away.
	checks := []struct {
		query string
		want  float64
	}{
		// Every finished request, by the final scrape the run waited for.
		{`sum(last_over_time(inferload_requests_total{job="inferload",outcome="ok"}[5m]))`, float64(s.Requests.Succeeded)},
		// Output tokens of all successes (4 each from the chat server).
		{`sum(last_over_time(inferload_output_tokens_total{job="inferload"}[5m]))`, float64(4 * s.Requests.Succeeded)},
		// One TTFT observation per streamed success.
		{`sum(last_over_time(inferload_ttft_seconds_count{job="inferload"}[5m]))`, float64(s.Requests.Succeeded)},
		// The info metric carries the run's name.
		{`count(last_over_time(inferload_run_info{job="inferload",run="` + s.Name + `"}[5m]))`, 1},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range checks {
		waitForProm(ctx, t, prom, c.query, c.want)
	}
}
