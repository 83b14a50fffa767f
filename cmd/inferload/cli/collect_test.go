package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inferload/inferload/distributed"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// TestCollectAcrossProcesses runs a distributed run as a cluster would,
// each part its own process on loopback: a collector and three segments
// streaming to it, against a chat server; the third segment is killed by
// SIGKILL mid-run. The collector merges what it got: the run is marked
// killed, the killed segment lost at most about its last second of
// records, and the plan's threshold, which every segment alone would
// pass, fails on the merged data and sets the collector's exit code (99).
func TestCollectAcrossProcesses(t *testing.T) {
	t.Parallel()
	srv := chatServer(t, 4, time.Millisecond)
	work := t.TempDir()
	planFile := filepath.Join(work, "plan.yaml")
	// Three segments of 6 users for 3 s send thousands of requests each;
	// "at most 30 requests in all" fails only once they are added up.
	plan := fmt.Sprintf(`name: cluster
target: {url: %s/v1, model: m}
load: {concurrency: 6, duration: 3s}
workload: {input_tokens: "8", output_tokens: "4"}
observe: {gpu: false, scrape: "off"}
thresholds: ["requests.succeeded <= 30"]
`, srv.URL)
	writeFile(t, planFile, plan)
	addrFile := filepath.Join(work, "addr")
	collector, colOut := startChildVia(t, nil, nil, "collect", "--listen", "127.0.0.1:0", "--addr-file", addrFile, "--segments", "3",
		"--dir", filepath.Join(work, "gathered"), "--out", filepath.Join(work, "merged"), "--segment-timeout", "3s", "-o", "json", "-q")
	raw := waitForPath(t, addrFile)
	url := "http://" + strings.TrimSpace(string(raw))
	// Given no token on loopback, the collector made one, for its user only.
	tokenFile := filepath.Join(work, "gathered", distributed.TokenFile)
	if fi, err := os.Stat(tokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the collector's token file: %v, %v; want it readable by its user only", fi, err)
	}

	var shards []*exec.Cmd
	for i := range 3 {
		shards = append(shards, startChildArgs(t, "run", "-f", planFile, "--segment", fmt.Sprintf("%d/3", i), "--collector", url,
			"--collector-token-file", tokenFile, "--out", filepath.Join(work, fmt.Sprint("shard-", i)), "-q"))
	}
	// Killed mid-run, once the collector holds some of its records.
	killed := waitForFile(t, filepath.Join(work, "shard-2"), rundir.Records, func(b []byte) bool { return recordLines(b) >= 50 })
	waitForPath(t, filepath.Join(work, "gathered", "segment-2", rundir.Records))
	if err := shards[2].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	for _, sh := range shards[:2] {
		if err := sh.Wait(); err != nil && sh.ProcessState.ExitCode() != ExitThresholds {
			t.Errorf("segment exit: %v", err)
		}
	}
	_ = shards[2].Wait()
	err := collector.Wait()
	if code := collector.ProcessState.ExitCode(); code != ExitThresholds {
		t.Fatalf("collector exit %d (%v), want %d from the merged threshold", code, err, ExitThresholds)
	}
	var s record.Summary
	if err := json.Unmarshal(colOut.Bytes(), &s); err != nil {
		t.Fatalf("collector output: %v\n%s", err, colOut.String())
	}
	if !s.Interrupted || len(s.Thresholds) != 1 || s.Thresholds[0].Passed {
		t.Errorf("merged interrupted %v, thresholds %+v: want a killed run whose threshold failed", s.Interrupted, s.Thresholds)
	}
	checkLostTail(t, filepath.Join(killed, rundir.Records), filepath.Join(work, "gathered", "segment-2", rundir.Records), killedAt)
}

// checkLostTail checks what a killed segment lost: the collector holds a
// prefix of the records it wrote, and what it never got finished within
// about a second (the upload interval) plus the file's own flush
// interval before the kill. It returns both sets of records.
func checkLostTail(t *testing.T, localPath, gatheredPath string, killedAt time.Time) (local, got []*record.Result) {
	t.Helper()
	local, got = readRecords(t, localPath), readRecords(t, gatheredPath)
	if len(got) == 0 || len(got) > len(local) {
		t.Fatalf("the collector holds %d of the killed segment's %d records", len(got), len(local))
	}
	for i := range got {
		if got[i].ID != local[i].ID {
			t.Fatalf("the collector's record %d is request %d, the segment's %d: not a prefix", i, got[i].ID, local[i].ID)
		}
	}
	if len(got) == len(local) {
		return local, got // the kill came between two uploads and lost nothing
	}
	lostFrom := local[len(got)].DoneUS()
	if span := local[len(local)-1].DoneUS() - lostFrom; span > 2_500_000 {
		t.Errorf("the killed segment lost %d records spanning %.1f s of its run (killed %s ago); want about a second", len(local)-len(got), float64(span)/1e6, time.Since(killedAt).Round(time.Millisecond))
	}
	return local, got
}

// waitForPath polls until path exists and is not empty.
func waitForPath(t *testing.T, path string) []byte {
	t.Helper()
	deadline := time.Now().Add(childPatience)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && len(bytes.TrimSpace(b)) > 0 {
			return b
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never appeared in %s", path, childPatience)
	return nil
}

func readRecords(t *testing.T, path string) []*record.Result {
	t.Helper()
	var out []*record.Result
	b := mustRead(t, path)
	if rundir.IsZstd(b) {
		b, _, _ = rundir.DecodeFrames(nil, b) // the whole frames: a killed writer's last is cut
	}
	for line := range bytes.Lines(b) {
		var r record.Result
		if err := json.Unmarshal(line, &r); err != nil {
			break // a line cut by the kill
		}
		out = append(out, &r)
	}
	return out
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeFile writes content to path (0o644) and fails the test if it cannot.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCollectorTokenAcrossProcesses: a collector with a token refuses a
// segment that sends none and one that sends another, and each segment's
// own log says why (401 and the fix); neither log nor the collector's
// shows the token. Beyond loopback a collector without a token refuses to
// start, and an empty token file is an error.
func TestCollectorTokenAcrossProcesses(t *testing.T) {
	t.Parallel()
	const token = "tok-7f3a9c0e5b1d"
	work := t.TempDir()
	tokenFile := filepath.Join(work, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addrFile := filepath.Join(work, "addr")
	collector := exec.Command(os.Args[0], "collect", "--listen", "127.0.0.1:0", "--addr-file", addrFile, "--segments", "2",
		"--dir", filepath.Join(work, "gathered"), "--out", filepath.Join(work, "merged"), "--token-file", tokenFile)
	collector.Env = append(os.Environ(), "INFERLOAD_CLI_CHILD=1")
	var colErr bytes.Buffer
	collector.Stderr = &colErr
	if err := collector.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = collector.Process.Kill(); _ = collector.Wait() })
	url := "http://" + strings.TrimSpace(string(waitForPath(t, addrFile)))
	planFile := filepath.Join(work, "plan.yaml")
	writeFile(t, planFile, "name: t\ntarget: {url: http://127.0.0.1:9/v1, model: m}\nload: {concurrency: 2, duration: 1s}\n")
	for _, tc := range []struct{ name, env, want string }{
		{"no token", "", "needs its token"},
		{"another token", "INFERLOAD_COLLECTOR_TOKEN=not-the-token", "does not match"},
	} {
		cmd := exec.Command(os.Args[0], "run", "-f", planFile, "--segment", "0/2", "--collector", url, "--out", filepath.Join(work, "runs"), "-q")
		cmd.Env = append(os.Environ(), "INFERLOAD_CLI_CHILD=1", tc.env)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "401") || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: segment exit %v, log %q: want a failure saying 401 and %q", tc.name, err, out, tc.want)
		}
		if strings.Contains(string(out), token) {
			t.Errorf("%s: the segment's log shows the collector's token", tc.name)
		}
	}
	_ = collector.Process.Kill()
	_ = collector.Wait()
	if strings.Contains(colErr.String(), token) {
		t.Error("the collector's log shows its token")
	}

	code, _, stderr := runCLI(t, "collect", "--listen", "0.0.0.0:0", "--segments", "1", "--dir", filepath.Join(work, "g2"))
	if code != ExitUsage || !strings.Contains(stderr, "needs a token") {
		t.Errorf("collect beyond loopback without a token: exit %d, %q; want a usage error asking for a token", code, stderr)
	}
	empty := filepath.Join(work, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "collect", "--segments", "1", "--token-file", empty, "--dir", filepath.Join(work, "g3"))
	if code != ExitUsage || !strings.Contains(stderr, "is empty") {
		t.Errorf("collect with an empty token file: exit %d, %q; want a usage error", code, stderr)
	}
}
