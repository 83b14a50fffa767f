package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// runDirIn returns the one run directory a run wrote under out.
func runDirIn(t *testing.T, out string) string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(out, "*"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("want one run directory under %s, found %v (%v)", out, dirs, err)
	}
	return dirs[0]
}

// countLines counts the lines of a file.
func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

// parquetRows opens a Parquet file and returns its row count.
func parquetRows(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return int(pf.NumRows())
}

// TestRunWritesExports: run --csv --parquet --junit --influx-out leaves
// records.csv, series.csv, records.parquet and series.parquet in the run
// directory (one row per record and window), a JUnit file with one case
// per threshold and a line-protocol file with one line per window;
// `export` then prints the same CSV and Parquet on stdout.
func TestRunWritesExports(t *testing.T) {
	t.Parallel()
	srv := chatServer(t, 4, 0)
	out, files := t.TempDir(), t.TempDir()
	junit, influx := filepath.Join(files, "thresholds.xml"), filepath.Join(files, "series.lp")
	code, _, stderr := runCLI(t, "run", "--url", srv.URL+"/v1", "--concurrency", "2", "--requests", "12",
		"--input-tokens", "8", "--output-tokens", "4", "--out", out, "-q",
		"--threshold", "error_rate < 0.01", "--threshold", "ttft_ms.p50 < 0",
		"--csv", "--parquet", "--junit", junit, "--influx-out", influx)
	if code != ExitThresholds {
		t.Fatalf("exit %d, want %d (one threshold fails); stderr %s", code, ExitThresholds, stderr)
	}
	dir := runDirIn(t, out)
	st, err := rundir.ReadRecords(rundir.RecordsFile(dir), func(*record.Result) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	records := st.Values
	windows := countLines(t, filepath.Join(dir, rundir.Series))
	f, err := os.Open(filepath.Join(dir, "records.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != records+1 || records != 12 {
		t.Errorf("records.csv: %d rows (%v), want a header and %d records (12)", len(rows), err, records)
	}
	if got := countLines(t, filepath.Join(dir, "series.csv")); got != windows+1 {
		t.Errorf("series.csv: %d lines, want a header and %d windows", got, windows)
	}
	if got := countLines(t, influx); got != windows || windows == 0 {
		t.Errorf("line protocol: %d lines, want one per window (%d)", got, windows)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	b, _ := os.ReadFile(junit)
	if err := xml.Unmarshal(b, &doc); err != nil || doc.Tests != 2 || doc.Failures != 1 {
		t.Errorf("JUnit: %+v (%v), want 2 tests and 1 failure", doc, err)
	}
	code, stdout, stderr := runCLI(t, "export", dir, "--csv", "records")
	want, _ := os.ReadFile(filepath.Join(dir, "records.csv"))
	if code != ExitOK || stdout != string(want) {
		t.Errorf("export --csv records: exit %d, stderr %s; stdout differs from records.csv", code, stderr)
	}
	for file, want := range map[string]int{"records.parquet": records, "series.parquet": windows} {
		if got := parquetRows(t, filepath.Join(dir, file)); got != want {
			t.Errorf("%s: %d rows, want %d", file, got, want)
		}
	}
	code, stdout, stderr = runCLI(t, "export", dir, "--parquet", "records")
	want, _ = os.ReadFile(filepath.Join(dir, "records.parquet"))
	if code != ExitOK || stdout != string(want) {
		t.Errorf("export --parquet records: exit %d, stderr %s; stdout differs from records.parquet", code, stderr)
	}
	// report rebuilds the same summary, so its JUnit file is the run's.
	again := filepath.Join(files, "again.xml")
	if code, _, stderr := runCLI(t, "report", dir, "-q", "--junit", again); code != ExitThresholds {
		t.Fatalf("report --junit: exit %d: %s", code, stderr)
	}
	if b2, err := os.ReadFile(again); err != nil || string(b2) != string(b) {
		t.Errorf("report --junit wrote %q (%v), want the run's JUnit file", b2, err)
	}
}

// TestExportCommandErrors: export refuses what it cannot do with a usage
// error, and a run directory without files is a plain error naming them.
func TestExportCommandErrors(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	tests := []struct {
		name    string
		args    []string
		code    int
		wantErr string
	}{
		// Nothing chosen: say what can be.
		{"nothing", []string{"export", empty}, ExitUsage, "choose exactly one"},
		// Two choices at once are ambiguous on one stdout.
		{"two", []string{"export", empty, "--junit", "--influx"}, ExitUsage, "choose exactly one"},
		// An unknown CSV kind names the valid ones.
		{"bad csv", []string{"export", empty, "--csv", "events"}, ExitUsage, "records, series"},
		// So does an unknown Parquet kind.
		{"bad parquet", []string{"export", empty, "--parquet", "events"}, ExitUsage, "records, series"},
		// Parquet of a directory that is not a run names the missing file.
		{"no records parquet", []string{"export", empty, "--parquet", "records"}, ExitError, rundir.Records},
		// A directory that is not a run: the missing file is named.
		{"no records", []string{"export", empty, "--csv", "records"}, ExitError, rundir.Records},
		// JUnit needs summary.json.
		{"no summary", []string{"export", empty, "--junit"}, ExitError, rundir.Summary},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.wantErr) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d mentioning %q", tt.name, code, stderr, tt.code, tt.wantErr)
		}
	}
}

// TestExportInfluxURL posts a run's series to a real HTTP server standing
// in for InfluxDB, with the token taken from the environment.
func TestExportInfluxURL(t *testing.T) {
	t.Parallel()
	chat := chatServer(t, 4, 0)
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "run", "--url", chat.URL+"/v1", "--concurrency", "2", "--requests", "6",
		"--input-tokens", "8", "--output-tokens", "4", "--out", out, "-q"); code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	dir := runDirIn(t, out)
	got := make(chan string, 1)
	influx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- r.Header.Get("Authorization") + "\n" + string(body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer influx.Close()
	var errb bytes.Buffer
	st := &State{Args: []string{"export", dir, "--influx-url", influx.URL + "/api/v2/write?bucket=b"},
		Stdout: io.Discard, Stderr: &errb, ReadFile: os.ReadFile, Version: "test",
		Getenv: func(k string) string {
			if k == influxTokenEnv {
				return "tok"
			}
			return ""
		}}
	if code := Main(st); code != ExitOK {
		t.Fatalf("export --influx-url: exit %d: %s", code, errb.String())
	}
	body := <-got
	s, err := rundir.ReadSummary(filepath.Join(dir, rundir.Summary))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(body, "Token tok\ninferload_series,run="+s.Name+" completed=") {
		t.Errorf("InfluxDB got %q, want the token and line protocol of run %s", body, s.Name)
	}
}
