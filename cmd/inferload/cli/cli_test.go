package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"go.uber.org/goleak"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// TestMain lets a test re-execute this binary as the real inferload
// command (for the SIGKILL and SIGTERM tests), and lets the txtar scripts
// of TestScripts run it under the name inferload (script_test.go).
func TestMain(m *testing.M) {
	if os.Getenv("INFERLOAD_CLI_CHILD") == "1" {
		os.Exit(Main(OSState()))
	}
	testscript.Main(leakChecked{m}, map[string]func(){
		"inferload": func() { os.Exit(Main(OSState())) },
	})
}

// leakChecked runs the package's tests, then fails them if a goroutine
// outlived them (goleak): every command joins what it starts.
type leakChecked struct{ m *testing.M }

func (l leakChecked) Run() int {
	code := l.m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			return 1
		}
	}
	return code
}

// chatServer streams `tokens` chunks `gap` apart, vLLM style.
func chatServer(t *testing.T, tokens int, gap time.Duration) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for i := range tokens {
			select {
			case <-time.After(gap):
			case <-r.Context().Done():
				return
			}
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"w%d \"}}]}\n\n", i)
			fl.Flush()
		}
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", tokens)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLIEnv(t, nil, args...)
}

// runCLIEnv is runCLI with env as the process's environment.
func runCLIEnv(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	st := &State{Args: args, Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] },
		Version: "test"} // files read as the real process reads them (bounded)
	code = Main(st)
	return code, out.String(), errb.String()
}

func TestRunPrintsSummaryJSON(t *testing.T) {
	t.Parallel()
	srv := chatServer(t, 4, 0)
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", "--url", srv.URL+"/v1", "--concurrency", "2",
		"--requests", "10", "--input-tokens", "8", "--output-tokens", "4", "--out", dir, "-o", "json", "-q")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	var s record.Summary
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("stdout is not summary JSON: %v\n%s", err, stdout)
	}
	if s.Requests.Succeeded != 10 || s.SchemaVersion != record.SchemaVersion {
		t.Errorf("summary %+v: want 10 successes and the schema version", s.Requests)
	}
}

func TestRunTextOutputShowsTableAndRunDir(t *testing.T) {
	t.Parallel()
	srv := chatServer(t, 4, 0)
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", "--url", srv.URL+"/v1", "--concurrency", "1",
		"--requests", "3", "--out", dir)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	if !strings.Contains(stdout, "TTFT") || !strings.Contains(stderr, "results: "+dir) {
		t.Errorf("stdout %q / stderr %q: want a latency table and the run directory", stdout, stderr)
	}
}

func TestBadInputExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		// an unknown flag is a usage error that says which flag
		{"unknown flag", []string{"run", "--concurency", "4"}, ExitUsage, "concurency"},
		// a plan without a target names the missing field
		{"missing url", []string{"run", "--concurrency", "4"}, ExitUsage, "url"},
		// both load models at once is rejected with both names
		{"both loops", []string{"run", "--url", "http://127.0.0.1:1/v1", "--concurrency", "1", "--rate", "2"}, ExitUsage, "rate"},
		// a bad output format is a usage error
		{"bad output", []string{"run", "-o", "xml"}, ExitUsage, "xml"},
		// a missing plan file names the file
		{"missing plan", []string{"run", "-f", "/nonexistent/plan.yaml"}, ExitUsage, "/nonexistent/plan.yaml"},
		// report of a directory that is not a run directory
		{"report no dir", []string{"report", "/nonexistent/run"}, ExitError, "not a run directory"},
		// a malformed stage is a bad plan field: exit 2
		{"bad stage", []string{"run", "--url", "http://127.0.0.1:1/v1", "--concurrency", "1", "--stage", "fast@8"}, ExitUsage, "fast@8"},
		// report needs exactly one argument
		{"report no arg", []string{"report"}, ExitUsage, "arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d stderr %q: want exit %d mentioning %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}

// startChild runs `inferload run` against a chat server as a separate
// process, and returns it with its run directory once that holds n
// records.
func startChild(t *testing.T, n int) (cmd *exec.Cmd, runDir string) {
	t.Helper()
	srv := chatServer(t, 4, time.Millisecond)
	out := t.TempDir()
	cmd = startChildArgs(t, "run", "--url", srv.URL+"/v1", "--concurrency", "8", "--duration", "5m",
		"--input-tokens", "8", "--output-tokens", "4", "--out", out, "-q", "--grace", "2s")
	return cmd, waitForRecords(t, out, n)
}

// startChildArgs runs this test binary as inferload with args.
func startChildArgs(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd, _ := startChildVia(t, nil, nil, args...)
	return cmd
}

// startChildVia runs this test binary as inferload with args, through
// the command wrap (e.g. ip netns exec NS; nil: directly) and with env
// added; its stdout is the returned buffer, read once it has exited.
func startChildVia(t *testing.T, wrap, env []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	argv := append(append(append([]string(nil), wrap...), os.Args[0]), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), "INFERLOAD_CLI_CHILD=1"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("child stderr: %s", stderr.String())
		}
	})
	return cmd, &stdout
}

// killAndRebuild SIGKILLs the child and returns what `inferload report`
// rebuilds from runDir. A killed run may have lost its last records:
// report says so and exits with ExitRecordsLost.
func killAndRebuild(t *testing.T, cmd *exec.Cmd, runDir string) record.Summary {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	code, stdout, stderr := runCLI(t, "report", runDir, "-o", "json")
	if code != ExitRecordsLost || !strings.Contains(stderr, "the run was killed before it ended") {
		t.Fatalf("report exit %d: %s\nwant %d and the kill stated", code, stderr, ExitRecordsLost)
	}
	var s record.Summary
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// waitForRecords polls the child's records until it has at least n lines.
func waitForRecords(t *testing.T, out string, n int) string {
	t.Helper()
	return waitForFile(t, out, rundir.Records, func(b []byte) bool { return recordLines(b) >= n })
}

// A SIGKILL loses at most the last second: the records flushed so far are
// readable and `report` rebuilds a summary from them.
func TestSIGKILLKeepsFlushedRecords(t *testing.T) {
	t.Parallel()
	cmd, runDir := startChild(t, 50)
	s := killAndRebuild(t, cmd, runDir)
	if s.Requests.Succeeded < 50 || !s.Interrupted {
		t.Errorf("rebuilt %+v interrupted=%v: want >= 50 successes and interrupted", s.Requests, s.Interrupted)
	}
}

// A sweep killed by SIGKILL in its third step rebuilds every step whose
// stage_end reached the disk, each from its own records, with the knee
// verdict over them.
func TestSIGKILLedSweepKeepsCompletedSteps(t *testing.T) {
	t.Parallel()
	srv := chatServer(t, 4, time.Millisecond)
	out := t.TempDir()
	cmd := startChildArgs(t, "sweep", "--url", srv.URL+"/v1", "--users", "1,2,4,8", "--duration", "700ms",
		"--input-tokens", "8", "--output-tokens", "4", "--out", out, "-q", "--grace", "2s")
	runDir := waitForFile(t, out, "events.jsonl", func(b []byte) bool { return bytes.Count(b, []byte(`"kind":"stage_end"`)) >= 2 })
	s := killAndRebuild(t, cmd, runDir)
	events, err := os.ReadFile(filepath.Join(runDir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ended := bytes.Count(events, []byte(`"kind":"stage_end"`))
	if !s.Interrupted || len(s.Steps) != ended || s.Knee == nil {
		t.Fatalf("interrupted %v, %d steps for %d stage_end events, knee %v: want every completed step and a knee verdict",
			s.Interrupted, len(s.Steps), ended, s.Knee)
	}
	for i, st := range s.Steps {
		if st.Index != i+1 || st.Requests.Succeeded == 0 || st.Validity.AchievedLoad == 0 {
			t.Errorf("step %d: index %d, %d successes, achieved %v: want its own figures", i+1, st.Index, st.Requests.Succeeded, st.Validity.AchievedLoad)
		}
	}
}

// waitForFile polls the child's run directory until its file name holds
// what done wants, and returns the directory.
// childPatience bounds how long a test waits for a child process's
// file: generous, because on a loaded two-core CI host a child that
// compiles nothing can still take tens of seconds to start its run, and
// the wait ends as soon as the file is there.
const childPatience = 2 * time.Minute

func waitForFile(t *testing.T, out, name string, done func([]byte) bool) string {
	t.Helper()
	deadline := time.Now().Add(childPatience)
	for time.Now().Before(deadline) {
		paths, _ := filepath.Glob(filepath.Join(out, "*", name))
		if len(paths) == 1 {
			if b, _ := os.ReadFile(paths[0]); done(b) {
				return filepath.Dir(paths[0])
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("child's %s never got there in %s", name, childPatience)
	return ""
}

// SIGTERM is a graceful stop: the child finishes in-flight requests, writes
// summary.json and exits with the interrupted code.
func TestSIGTERMStopsGracefully(t *testing.T) {
	t.Parallel()
	cmd, runDir := startChild(t, 20)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if cmd.ProcessState.ExitCode() != ExitInterrupted {
		t.Fatalf("exit %v, want %d", err, ExitInterrupted)
	}
	s, err := rundir.ReadSummary(filepath.Join(runDir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Interrupted || s.Requests.Succeeded < 20 || s.Requests.Failed != 0 {
		t.Errorf("summary %+v interrupted=%v: want >= 20 successes, no failures, interrupted", s.Requests, s.Interrupted)
	}
}

// recordLines counts the whole records in the bytes of a records file
// read while its writer runs: the lines of its whole frames when
// compressed, its whole lines when plain.
func recordLines(b []byte) int {
	if rundir.IsZstd(b) {
		b, _, _ = rundir.DecodeFrames(nil, b)
	}
	return bytes.Count(b, []byte("\n"))
}
