package experiment

import (
	"bytes"
	"os"
	"path/filepath"
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
