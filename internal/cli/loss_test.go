package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferload/inferload/rundir"
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
