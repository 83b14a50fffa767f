package experiment

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
)

// TestFullDiskStopsTheRun: records.jsonl on a full disk (/dev/full, where
// every write fails with ENOSPC). The first failed write stops issuing, so
// a run planned for ten minutes ends on its own within the test's minute;
// it ends as a WriteFailure whose summary comes from the live aggregate
// and counts every finished request, all of them missing from the file.
func TestFullDiskStopsTheRun(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s, stream: true}
load: {concurrency: 2, duration: 10m, grace: 5s}
workload: {input_tokens: "16", output_tokens: "8"}
`, url))
	opts := Options{openLog: func(path string) (*rundir.JSONLWriter, error) {
		if filepath.Base(path) == rundir.Records {
			path = "/dev/full"
		}
		return rundir.NewJSONLWriter(path)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, p, opts)
	if ctx.Err() != nil {
		t.Fatal("the run went on after its records stopped being written")
	}
	var wf *WriteFailure
	if !errors.As(err, &wf) {
		t.Fatalf("got %v, want a WriteFailure", err)
	}
	if wf.Finished == 0 || wf.Missing != wf.Finished {
		t.Errorf("%d finished, %d missing: want every finished record missing from /dev/full", wf.Finished, wf.Missing)
	}
	if s := wf.Summary; s == nil || s.Requests.Total != wf.Finished || res.Summary != s || !s.Interrupted {
		t.Errorf("live summary %+v does not count the %d finished requests, or is not marked interrupted", s, wf.Finished)
	}
	if msg := err.Error(); !strings.Contains(msg, "no space left on device") || strings.Contains(msg, "write: write") {
		t.Errorf("message %q: want the cause once", msg)
	}
	// `inferload report` once the disk has room: the run's own events say
	// it stopped on a write failure and how many records it wrote, so
	// the rebuild counts every one of them missing from the (empty)
	// records file the full disk left.
	if err := os.WriteFile(filepath.Join(wf.Dir, rundir.Records), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rb, err := summary.Rebuild(wf.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if l := rb.Loss; !l.Lost() || l.Missing != wf.Finished || l.Finished != wf.Finished || !rb.Summary.Interrupted {
		t.Errorf("rebuilt: loss %+v, interrupted %v: want all %d records missing and the run interrupted", l, rb.Summary.Interrupted, wf.Finished)
	}
	if w := rb.Summary.Warnings; len(w) == 0 || !strings.Contains(w[0], fmt.Sprintf("%d of the %d records the run wrote are missing", wf.Finished, wf.Finished)) {
		t.Errorf("warnings %q: want the first to count the missing records", w)
	}
}

// TestSignalDuringProbe: a signal (ctx canceled) while the /v1/models
// probe waits on a server that never answers cancels the probe at once
// (the server sees its request go away) and ends the run before any
// request as ErrInterrupted.
func TestSignalDuringProbe(t *testing.T) {
	t.Parallel()
	arrived, gone := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			close(arrived)
			<-r.Context().Done()
			close(gone)
			return
		}
		t.Errorf("request %s sent after the signal", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s/v1, preflight: false}
load: {concurrency: 1, requests: 1}
workload: {input_tokens: "8", output_tokens: "4"}
`, srv.URL))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	_, err := Run(ctx, p, Options{})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("got %v, want ErrInterrupted", err)
	}
	<-gone // the server saw the probe go away
	// The probe ended by the signal, not by its own 3 s timeout.
	envs, _ := filepath.Glob(filepath.Join(p.Output.Dir, "*", rundir.Env))
	if len(envs) != 1 {
		t.Fatalf("env.json files: %v, want one", envs)
	}
	raw, err := os.ReadFile(envs[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "context canceled") || strings.Contains(string(raw), "deadline") {
		t.Errorf("env.json: the probe was not ended by the signal:\n%s", raw)
	}
}
