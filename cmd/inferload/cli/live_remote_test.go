package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/rundir"
)

// TestPrometheusRemoteWrite runs a test that pushes its live metrics to
// Debian's real Prometheus (2.42, a remote-write 1.0 receiver) and
// queries them back: the counters it stored equal what the run recorded.
// The same run with the 2.0 protocol is refused by that receiver, and the
// run still succeeds with a warning.
func TestPrometheusRemoteWrite(t *testing.T) {
	t.Parallel()
	prom := startPrometheus(t, freePort(t), "--web.enable-remote-write-receiver")
	chat := chatServer(t, 4, 5*time.Millisecond)
	tests := []struct {
		name, version string
		warn          bool
	}{
		// 1.0 is what Prometheus 2.x decodes: stored, no warning.
		{"rw1", "1.0", false},
		// 2.0 to a 1.0-only receiver: the client sees no written-samples
		// count, so the push is reported, not silently lost.
		{"rw2", "2.0", true},
	}
	for _, tt := range tests {
		out := t.TempDir()
		code, _, stderr := runCLI(t, "run", "--url", chat.URL+"/v1", "--concurrency", "2", "--duration", "2s",
			"--input-tokens", "8", "--output-tokens", "4", "--out", out, "-q",
			"--remote-write", prom+"/api/v1/write", "--remote-write-version", tt.version, "--remote-write-interval", "500ms")
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", tt.name, code, stderr)
		}
		if got := strings.Contains(stderr, "warning: remote write"); got != tt.warn {
			t.Errorf("%s: warning printed = %v, want %v: %s", tt.name, got, tt.warn, stderr)
		}
		if tt.warn {
			continue
		}
		s, err := rundir.ReadSummary(filepath.Join(runDirIn(t, out), rundir.Summary))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		for _, c := range []struct {
			query string
			want  float64
		}{
			// Every finished request, from the final push at the run's end
			// (the 2.0 run stored nothing, so only this run counts).
			{`sum(last_over_time(inferload_requests_total{outcome="ok"}[5m]))`, float64(s.Requests.Succeeded)},
			// Output tokens of all successes (4 each from the chat server).
			{`sum(last_over_time(inferload_output_tokens_total[5m]))`, float64(4 * s.Requests.Succeeded)},
		} {
			waitForProm(ctx, t, prom, c.query, c.want)
		}
		cancel()
	}
}
