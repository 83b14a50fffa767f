package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
)

// TestReportAndExportStateLostRecords: on a records file cut in half,
// `report` and `export` use every record left, say how many of the
// records the run wrote are missing, and exit ExitRecordsLost; with 4 KiB
// of zeros after the last frame (what a filesystem can leave after a
// crash) every record is kept, the skipped bytes are noted, and both
// exit 0.
func TestReportAndExportStateLostRecords(t *testing.T) {
	t.Parallel()
	srv := chatServer(t, 4, 0)
	out := t.TempDir()
	code, _, stderr := runCLI(t, "run", "--url", srv.URL+"/v1", "--concurrency", "4",
		"--requests", "300", "--input-tokens", "8", "--output-tokens", "4", "--out", out, "-q")
	if code != ExitOK {
		t.Fatalf("run exit %d: %s", code, stderr)
	}
	whole := runDirIn(t, out)
	tests := []struct {
		name   string
		damage func([]byte) []byte
		code   int
		want   string // in stderr
		lines  func(n int) bool
	}{
		// The case: half the file gone, and report used to say
		// only that "the last record line was cut short", exit 0.
		{"cut in half", func(b []byte) []byte { return b[:len(b)/2] }, ExitRecordsLost,
			"of the 300 records the run wrote are missing", func(n int) bool { return n < 300 }},
		// The case: zeros appended made the whole file unreadable.
		{"4 KiB of zeros appended", func(b []byte) []byte { return append(b, make([]byte, 4096)...) }, ExitOK,
			"note: 4096 bytes of records.jsonl.zst held no readable record", func(n int) bool { return n == 300 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, name := range []string{rundir.Plan, rundir.Experiment, rundir.Env, rundir.Events, rundir.Series, rundir.Records} {
				b, err := os.ReadFile(filepath.Join(whole, name))
				if err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				if name == rundir.Records {
					b = tt.damage(b)
				}
				if err == nil {
					if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			code, _, stderr := runCLI(t, "report", dir, "-o", "json")
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("report: exit %d, stderr %q; want %d saying %q", code, stderr, tt.code, tt.want)
			}
			code, stdout, stderr := runCLI(t, "export", dir, "--jsonl")
			if n := bytes.Count([]byte(stdout), []byte("\n")); code != tt.code || !strings.Contains(stderr, tt.want) || !tt.lines(n) {
				t.Errorf("export: exit %d, %d records, stderr %q; want %d saying %q", code, n, stderr, tt.code, tt.want)
			}
		})
	}
}

// TestSIGKILLLosesUnderASecond measures what a SIGKILL loses, on a real
// `inferload run` process against the simulator: the gap between the
// kill and the last completion in the records read back (each record's
// completion on the run clock, whose wall-time zero is run_start's), and
// the requests the server answered that have no record. The run's
// writer flushes every 200 ms (rundir.FlushInterval); docs/faults.md
// promises at most a second. The kill comes at a random phase of the
// flush cycle (run it with -count=N for the spread; BENCHMARKS.md).
func TestSIGKILLLosesUnderASecond(t *testing.T) {
	t.Parallel()
	prof, err := sim.LookupProfile("tiny")
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(sim.Config{Profile: prof, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	var answered atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Handler().ServeHTTP(w, r)
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			answered.Add(1)
		}
	}))
	t.Cleanup(target.Close)
	out := t.TempDir()
	const users = 16
	cmd := startChildArgs(t, "run", "--url", target.URL+"/v1", "--model", prof.Model, "--concurrency", fmt.Sprint(users),
		"--duration", "5m", "--input-tokens", "16", "--output-tokens", "4", "--out", out, "-q", "--gpu=false")
	runDir := waitForRecords(t, out, 1000)
	<-time.After(time.Duration(rand.IntN(1000)) * time.Millisecond) // the kill's phase, not a wait for anything
	killed := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	served := answered.Load()

	var started time.Time
	if _, err := rundir.ReadEvents(filepath.Join(runDir, rundir.Events), func(e *record.Event) error {
		if e.Kind == record.EventRunStart {
			started, err = time.Parse(time.RFC3339Nano, e.Message)
		}
		return err
	}); err != nil || started.IsZero() {
		t.Fatalf("run_start: %v", err)
	}
	var read, lastDoneUS int64
	if _, err := rundir.ReadRecords(rundir.RecordsFile(runDir), func(r *record.Result) error {
		read++
		lastDoneUS = max(lastDoneUS, r.DoneUS())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	lag := killed.Sub(started.Add(time.Duration(lastDoneUS) * time.Microsecond))
	rate := float64(read) / (float64(lastDoneUS) / 1e6)
	// Answered but not read: records lost, plus at most one request per
	// user the server finished but the client had not when it died.
	unread := served - read
	t.Logf("SIGKILL after %.1f s: %d records read, %d requests answered (%d unread, of which at most %d in flight; %.0f requests/s); the last record read finished %v before the kill",
		float64(lastDoneUS)/1e6, read, served, unread, users, rate, lag.Round(time.Millisecond))
	if lag > time.Second {
		t.Errorf("the last record read finished %v before the kill: want at most 1 s lost", lag)
	}
	if lost := float64(unread-users) / rate; lost > 1 {
		t.Errorf("%d answered requests have no record: %.2f s of them, want at most 1 s", unread, lost)
	}
}
