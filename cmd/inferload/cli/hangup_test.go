package cli

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/inferload/inferload/rundir"
)

// A dropped SSH session sends SIGHUP and takes the terminal with it: the
// run stops as on SIGTERM (summary.json and report.html written, exit
// 130) even though every later write to its stdout and stderr fails. The
// child's stdout and stderr are pipes whose readers are closed before the
// signal, the harshest form of a lost terminal: a write to them raises
// SIGPIPE, which kills a Go program writing to fd 1 or 2 unless told
// otherwise. The child is not quiet, so it writes progress to stderr and
// the summary to stdout after the signal.
func TestSIGHUPStopsLikeSIGTERM(t *testing.T) {
	t.Parallel()
	srv, url := startSim(t)
	out := t.TempDir()
	cmd := exec.Command(os.Args[0], "run", "--url", url, "--model", srv.Profile().Model, "--concurrency", "8",
		"--duration", "5m", "--input-tokens", "16", "--output-tokens", "8", "--out", out, "--grace", "5s")
	cmd.Env = append(os.Environ(), "INFERLOAD_CLI_CHILD=1")
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	terminal := []*os.File{stdoutR, stderrR} // the read ends: what the session takes away
	cmd.Stdout, cmd.Stderr = stdoutW, stderrW
	for _, f := range terminal {
		go func() { _, _ = io.Copy(io.Discard, f) }() // ends when f is closed
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdoutW.Close()
	stderrW.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	runDir := waitForRecords(t, out, 20)
	for _, f := range terminal {
		f.Close()
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err = <-waited:
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not end within 30 s of SIGHUP")
	}
	if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
		t.Fatalf("exit %d (%v), want %d as for SIGTERM", code, err, ExitInterrupted)
	}
	s, err := rundir.ReadSummary(filepath.Join(runDir, rundir.Summary))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Interrupted || s.Requests.Succeeded < 20 {
		t.Errorf("summary %+v interrupted=%v: want >= 20 successes, interrupted", s.Requests, s.Interrupted)
	}
	if _, err := os.Stat(filepath.Join(runDir, rundir.Report)); err != nil {
		t.Errorf("no report after SIGHUP: %v", err)
	}
}
