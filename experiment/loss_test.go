package experiment

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
)

// finishedRun runs 300 requests against the tiny simulator and returns
// the run directory, complete.
func finishedRun(t *testing.T) string {
	t.Helper()
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s, stream: true}
load: {concurrency: 8, requests: 300}
workload: {input_tokens: "16", output_tokens: "8"}
`, tinySim(t, sim.Faults{})))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Dir
}

// copyRun copies the files of run directory src into a new directory.
func copyRun(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestRebuildCountsMissingRecords: a rebuild says what a run directory
// is missing, counted against the number of records the run's run_end
// says it wrote: a records file cut in half loses records and says how
// many; junk after its last frame loses none (and says so); a killed run
// (no run_end, its series never written) is lost by nature, and its
// series is rebuilt from the records.
func TestRebuildCountsMissingRecords(t *testing.T) {
	t.Parallel()
	whole := finishedRun(t)
	records := func(dir string) string { return filepath.Join(dir, rundir.Records) }
	tests := []struct {
		name       string
		damage     func(t *testing.T, dir string)
		lost       bool
		missingMin int64 // at least this many known missing
		warning    string
		finished   int64 // what run_end says the run wrote
	}{
		{"records file cut in half", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(records(dir))
			writeFile(t, records(dir), b[:len(b)/2])
		}, true, 1, "of the 300 records the run wrote are missing", 300},
		{"4 KiB of zeros after the last frame", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(records(dir))
			writeFile(t, records(dir), append(b, make([]byte, 4096)...))
		}, false, 0, "4096 bytes of records.jsonl.zst held no readable record and were skipped (all 300 records the run wrote were read)", 300},
		// A run written before run_end counted its records: the damage
		// is found and counted, and whether records went with it cannot
		// be told, so it counts as lost.
		{"no count on run_end, records file cut in half", func(t *testing.T, dir string) {
			ev, _ := os.ReadFile(filepath.Join(dir, rundir.Events))
			writeFile(t, filepath.Join(dir, rundir.Events), bytes.Replace(ev, []byte(`,"records":300`), nil, 1))
			b, _ := os.ReadFile(records(dir))
			writeFile(t, records(dir), b[:len(b)/2])
		}, true, 0, "bytes of records.jsonl.zst held no readable record and were skipped", 0},
		{"killed: no run_end, series empty", func(t *testing.T, dir string) {
			ev, _ := os.ReadFile(filepath.Join(dir, rundir.Events))
			var kept []byte
			for line := range bytes.Lines(ev) {
				if !bytes.Contains(line, []byte(`"kind":"run_end"`)) {
					kept = append(kept, line...)
				}
			}
			writeFile(t, filepath.Join(dir, rundir.Events), kept)
			writeFile(t, filepath.Join(dir, rundir.Series), nil)
		}, true, 0, "the run was killed before it ended", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := copyRun(t, whole)
			tt.damage(t, dir)
			rb, err := summary.Rebuild(dir)
			if err != nil {
				t.Fatal(err)
			}
			l := rb.Loss
			if l.Lost() != tt.lost || l.Missing < tt.missingMin || l.Read+l.Missing > 300 || l.Finished != tt.finished {
				t.Errorf("loss %+v: want lost=%v, at least %d missing, %d written", l, tt.lost, tt.missingMin, tt.finished)
			}
			if l.Finished > 0 && l.Read+l.Missing != l.Finished {
				t.Errorf("loss %+v: read + missing is not what the run wrote", l)
			}
			if w := rb.Summary.Warnings; len(w) == 0 || !strings.Contains(w[0], tt.warning) {
				t.Errorf("warnings %q: want the first to say %q", w, tt.warning)
			}
			var windows, completed int64
			if _, err := rundir.ReadSeries(filepath.Join(dir, rundir.Series), func(w *record.Window) error {
				windows++
				completed += w.Completed
				return nil
			}); err != nil || windows == 0 || completed < l.Read {
				t.Errorf("series: %d windows counting %d requests (%v), want every record read in one", windows, completed, err)
			}
		})
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
