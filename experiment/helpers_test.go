package experiment

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
)

// tinySim serves the simulator's fast "tiny" profile, with faults (the
// zero value: none), on a free loopback port for the test's duration, and
// returns its OpenAI base URL.
func tinySim(t *testing.T, faults sim.Faults) string {
	t.Helper()
	_, url := enginetest.StartSim(t, sim.Config{Profile: enginetest.TinyProfile(t), Faults: faults, Seed: 1})
	return url
}

// expectRebuildIdentical rebuilds dir's summary.json from its records and
// fails unless it is byte for byte the one the live run wrote.
func expectRebuildIdentical(t *testing.T, dir string) {
	t.Helper()
	live, err := os.ReadFile(filepath.Join(dir, rundir.Summary))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := summary.Rebuild(dir); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := os.ReadFile(filepath.Join(dir, rundir.Summary))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(live, rebuilt) {
		t.Errorf("rebuilt summary.json differs from the live one:\nlive:    %s\nrebuilt: %s", live, rebuilt)
	}
}

// eachRecord streams the records of the run in dir to fn (rundir.ReadRecords)
// and fails the test on a read error or one of fn's.
func eachRecord(t *testing.T, dir string, fn func(*record.Result) error) {
	t.Helper()
	if _, err := rundir.ReadRecords(filepath.Join(dir, rundir.Records), fn); err != nil {
		t.Fatal(err)
	}
}

// postLog keeps the bodies of the POSTs a test server got, in arrival
// order; anything else (the preflight's probes) is answered 404.
type postLog struct {
	mu     sync.Mutex
	bodies []string
}

// keep reads r's body and keeps it when r is a POST, for the handler to
// answer; any other request it answers 404 itself, and reports false.
func (l *postLog) keep(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost {
		http.Error(w, "not found", http.StatusNotFound)
		return nil, false
	}
	l.mu.Lock()
	l.bodies = append(l.bodies, string(body))
	l.mu.Unlock()
	return body, true
}

// all returns the bodies kept so far.
func (l *postLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.bodies)
}

// runAgainst runs planFmt, its first %s the URL of a 127.0.0.1 server of
// h and args the rest, and fails the test when the run fails.
func runAgainst(t *testing.T, h http.Handler, planFmt string, args ...any) *Outcome {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	return runPlan(t, fmt.Sprintf(planFmt, append([]any{srv.URL}, args...)...))
}
