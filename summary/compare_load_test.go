package summary

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// TestLoadRunSamples reads a small run directory back: the measured
// window comes from events.jsonl (warm-up end to issuing stop) and only
// its whole seconds count; without events (a killed run) it runs from 0
// to the last completion; env.json is decoded; a directory without
// records, or with none in it, is refused with a reason.
func TestLoadRunSamples(t *testing.T) {
	t.Parallel()
	// One success completing in each of seconds 0..4, 10 tokens each,
	// and one failure.
	var recs []*record.Result
	for i := range 5 {
		recs = append(recs, &record.Result{ID: uint64(i + 1), SendUS: int64(i)*1_000_000 + 100_000, E2EUS: 500_000,
			OutputTokens: 10, Warmup: i == 0})
	}
	recs = append(recs, &record.Result{ID: 6, SendUS: 2_000_000, E2EUS: 1_000, Error: record.ErrHTTP5xx, Status: 503})
	events := []record.Event{
		{TimeUS: 1_000_000, Kind: record.EventWarmupEnd},
		{TimeUS: 4_000_000, Kind: record.EventMeasureEnd},
	}

	t.Run("window from events", func(t *testing.T) {
		t.Parallel()
		dir := writeRun(t, recs, events, `{"host":"a"}`)
		rs, err := LoadRunSamples(dir)
		if err != nil {
			t.Fatal(err)
		}
		if want := []float64{1, 1, 1}; !slices.Equal(rs.RequestsPerS, want) {
			t.Errorf("requests per second %v, want %v (seconds 1..3)", rs.RequestsPerS, want)
		}
		if rs.Overall.Succeeded != 4 || rs.Overall.Failed != 1 {
			t.Errorf("succeeded %d failed %d, want 4 and 1 (warm-up left out)", rs.Overall.Succeeded, rs.Overall.Failed)
		}
		if rs.Env["host"] != "a" || rs.Name != filepath.Base(dir) {
			t.Errorf("env %v name %q", rs.Env, rs.Name)
		}
	})
	t.Run("killed run", func(t *testing.T) {
		t.Parallel()
		rs, err := LoadRunSamples(writeRun(t, recs, nil, ""))
		if err != nil {
			t.Fatal(err)
		}
		// The last completion is at 4.6 s: whole seconds 0..3.
		if want := []float64{1, 1, 1, 1}; !slices.Equal(rs.RequestsPerS, want) || rs.Env != nil {
			t.Errorf("requests per second %v env %v, want %v and no env", rs.RequestsPerS, rs.Env, want)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		t.Parallel()
		if _, err := LoadRunSamples(t.TempDir()); !errors.Is(err, ErrNotRunDir) {
			t.Errorf("empty dir: %v, want ErrNotRunDir", err)
		}
		if _, err := LoadRunSamples(writeRun(t, nil, events, "")); err == nil || !strings.Contains(err.Error(), "no records") {
			t.Errorf("no records: %v", err)
		}
		if _, err := LoadRunSamples(writeRun(t, recs, nil, "{")); err == nil || !strings.Contains(err.Error(), rundir.Env) {
			t.Errorf("corrupt env.json: %v, want it named", err)
		}
	})
}

// writeRun writes records, events (when any) and env.json (when not
// empty) into a fresh directory.
func writeRun(t *testing.T, recs []*record.Result, events []record.Event, env string) string {
	t.Helper()
	dir := t.TempDir()
	w, err := rundir.NewJSONLWriter(filepath.Join(dir, rundir.RecordsPlain))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(events) > 0 {
		ew, err := rundir.NewJSONLWriter(filepath.Join(dir, rundir.Events))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if err := ew.Write(e); err != nil {
				t.Fatal(err)
			}
		}
		if err := ew.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if env != "" {
		if err := os.WriteFile(filepath.Join(dir, rundir.Env), []byte(env), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
