package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/distributed"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// TestSegmentsBeforeTheCollector starts a run in the order Kubernetes
// may: the load pods first, the collector last (its pod still waiting for
// its volume and image). Both segments meet a refused connection, say
// they wait, and once the collector listens the run completes: the
// collector merges both segments' requests, and while it holds, `inferload
// fetch` takes the merged run out of it, byte for byte, needing no tar.
// (Before the segments waited, each exited at once with code 1.)
func TestSegmentsBeforeTheCollector(t *testing.T) {
	t.Parallel()
	srv := chatServer(t, 2, time.Millisecond)
	work := t.TempDir()
	planFile := filepath.Join(work, "plan.yaml")
	plan := fmt.Sprintf(`name: order
target: {url: %s/v1, model: m}
load: {concurrency: 2, requests: 20}
workload: {input_tokens: "8", output_tokens: "2"}
observe: {gpu: false, scrape: "off"}
`, srv.URL)
	writeFile(t, planFile, plan)
	const token = "order-token-5e1f"
	env := map[string]string{distributed.TokenEnv: token}
	// A port nothing listens on yet; the collector takes it last.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	type exit struct {
		code   int
		stderr *syncBuffer
	}
	segments := make(chan exit, 2)
	var logs []*syncBuffer
	for i := range 2 {
		errb := &syncBuffer{}
		logs = append(logs, errb)
		go func() {
			code := Main(&State{Args: []string{"run", "-f", planFile, "--segment", fmt.Sprintf("%d/2", i), "--collector", "http://" + addr,
				"--out", filepath.Join(work, fmt.Sprint("shard-", i)), "-q"}, Stdout: &syncBuffer{}, Stderr: errb,
				Getenv: func(k string) string { return env[k] }, Version: "test"})
			segments <- exit{code, errb}
		}()
	}
	// Both segments have met the refusal and wait; only then the collector.
	deadline := time.Now().Add(childPatience)
	for _, errb := range logs {
		for !strings.Contains(errb.String(), "not up yet") {
			select {
			case e := <-segments:
				t.Fatalf("a segment exited %d before the collector started: %s", e.code, e.stderr.String())
			case <-time.After(10 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("a segment never said it waits for the collector: %s", errb.String())
			}
		}
	}
	var colOut, colErr syncBuffer
	hangUp := make(chan os.Signal, 1)
	collector := make(chan int, 1)
	go func() {
		collector <- Main(&State{Args: []string{"collect", "--listen", addr, "--segments", "2", "--dir", filepath.Join(work, "gathered"),
			"--out", filepath.Join(work, "merged"), "--hold", "10m", "-o", "json", "-q"}, Stdout: &colOut, Stderr: &colErr,
			Getenv: func(k string) string { return env[k] }, Signals: hangUp, Version: "test"})
	}()
	for range 2 {
		if e := <-segments; e.code != ExitOK {
			t.Errorf("segment exit %d: %s", e.code, e.stderr.String())
		}
	}
	// Merged and holding: the summary is out. The run comes out of the
	// collector without tar (fetch), the same bytes as it merged.
	for colOut.String() == "" {
		select {
		case code := <-collector:
			t.Fatalf("collector exit %d before holding: %s", code, colErr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector never printed its summary: %s", colErr.String())
		}
	}
	var s record.Summary
	if err := json.Unmarshal([]byte(colOut.String()), &s); err != nil {
		t.Fatalf("collector output: %v\n%s", err, colOut.String())
	}
	if s.Requests.Succeeded != 20 {
		t.Errorf("merged %d successful requests, want the plan's 20 from both segments", s.Requests.Succeeded)
	}
	code, stdout, stderr := runCLIEnv(t, env, "fetch", "http://"+addr, "--out", filepath.Join(work, "fetched"))
	merged, _ := filepath.Glob(filepath.Join(work, "merged", "*", rundir.Summary))
	if code != ExitOK || len(merged) != 1 {
		t.Fatalf("fetch exit %d (%s), merged %v", code, stderr, merged)
	}
	fetched := strings.TrimSpace(stdout)
	if got, want := mustRead(t, filepath.Join(fetched, rundir.Summary)), mustRead(t, merged[0]); !bytes.Equal(got, want) {
		t.Errorf("fetched summary.json differs from the merged one")
	}
	hangUp <- os.Interrupt // ends the hold
	if code := <-collector; code != ExitOK {
		t.Errorf("collector exit %d after its hold: %s", code, colErr.String())
	}
}

// TestSegmentGivesUpOnAMissingCollector: a collector that never comes ends
// the segment at --start-timeout with an error naming its URL, the wait
// and the flag that sets it; no load is sent.
func TestSegmentGivesUpOnAMissingCollector(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	planFile := filepath.Join(work, "plan.yaml")
	writeFile(t, planFile, "name: t\ntarget: {url: http://127.0.0.1:9/v1, model: m}\nload: {concurrency: 2, duration: 1s}\n")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	code, _, stderr := runCLIEnv(t, map[string]string{distributed.TokenEnv: "t"}, "run", "-f", planFile, "--segment", "0/2",
		"--collector", url, "--start-timeout", "600ms", "--out", filepath.Join(work, "runs"), "-q")
	for _, want := range []string{url, "did not answer in 600ms", "connection refused", "--start-timeout"} {
		if code == ExitOK || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr %q: want a failure saying %q", code, stderr, want)
		}
	}
	if runs, _ := filepath.Glob(filepath.Join(work, "runs", "*")); len(runs) != 0 {
		t.Errorf("a segment that never started wrote %v", runs)
	}
}
