package report

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"

	"github.com/inferload/inferload/internal/golden"
)

// exportRecords are planted records covering every column's cases.
var exportRecords = []*record.Result{
	// A plain streamed success: every latency column filled.
	// It is the second turn of the conversation request 0 started, its
	// reply too long to thread on, in a recorded session of 7 calls.
	{ID: 1, Class: "short", Turn: 2, Session: 0, ReplyCut: true, SessionCalls: 7, SendUS: 1000, TTFTUS: 120_000, E2EUS: 900_000, EventsUS: []int64{120_000, 130_000, 150_000},
		Stream: true, InputTokens: 128, OutputTokens: 3, TokenSource: record.TokensUsage, PromptTokensSent: 127,
		MaxTokens: 3, FinishReason: "length", Status: 200, BytesOut: 600, BytesIn: 900,
		CachedTokens: 64, ReuseTokens: 96, Graded: true, Correct: true},
	// An open-loop warm-up request that was late: queue delay and flags.
	{ID: 2, Step: 2, Warmup: true, OpenLoop: true, IntendedUS: 2_000_000, SendUS: 2_050_000, QueueDelayUS: 50_000,
		Late: true, E2EUS: 300_000, Stream: false, InputTokens: 64, OutputTokens: 10, Status: 200},
	// A failure whose message came from the target: comma, quote, newline
	// and a leading = (a spreadsheet formula) must survive as one cell.
	{ID: 3, Class: "long", Expect: record.ExpectRejection, SendUS: 3_000_000, E2EUS: 40_000, Status: 500,
		Error: record.ErrHTTP5xx, ErrorMsg: "=HYPERLINK(\"x\"),\nboom"},
	// A reasoning reply: 2 reasoning events, then the answer at 300 ms.
	{ID: 4, SendUS: 4_000_000, TTFTUS: 100_000, TTFRUS: 100_000, TTFOUS: 300_000, E2EUS: 400_000,
		EventsUS: []int64{100_000, 150_000, 300_000, 310_000}, Stream: true, OutputTokens: 4, ReasoningTokens: 2,
		ReasoningEvents: 2, Status: 200},
	// The first turn of a conversation: its session is its own id.
	{ID: 5, Class: "short", Turn: 1, Session: 5, SendUS: 5_000_000, E2EUS: 100_000, Status: 200},
	// A request answered on its third attempt (two 429s before it), timed
	// on the kernel clock, whose server reported its own timings and a
	// completion count the reply cannot have (kept in usage_output_tokens).
	{ID: 6, SendUS: 6_000_000, TTFTUS: 80_000, E2EUS: 200_000, Clock: record.ClockKernel, ReadLagUS: 1_500,
		Stream: true, OutputTokens: 2, EventsUS: []int64{80_000, 90_000}, MaxTokens: 2, IgnoreEOS: true,
		UsageImplausible: true, UsageOutputTokens: 900, Status: 200,
		TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", ResponseID: "resp_6",
		Attempts: []record.Attempt{{SendUS: 5_000_000, EndUS: 5_010_000, Status: 429, Error: record.ErrHTTP429, WaitUS: 100_000},
			{SendUS: 5_500_000, EndUS: 5_510_000, Status: 429, Error: record.ErrHTTP429, WaitUS: 400_000}},
		Server: &record.ServerTime{PrefillUS: 30_000, PromptN: 120, DecodeUS: 110_000, DecodeN: 2, QueueUS: 5_000, HasQueue: true}},
}

// exportWindows are planted series windows: a busy second and an empty one.
var exportWindows = []*record.Window{
	// A second with successes, a failure and fractional latencies.
	{TS: 0, Completed: 5, Succeeded: 4, Failed: 1, Warmup: 2, OutputTokens: 400, InputTokens: 512,
		TTFTP50MS: 101.5, TTFTP99MS: 180.25, E2EP99MS: 950},
	// An empty second: zeros, not blanks.
	{TS: 1},
	// A second with an expected rejection.
	{TS: 2, Completed: 1, ExpectedRejections: 1},
}

// TestRecordsCSV renders the planted records against a golden file and
// reads the CSV back: one row per record, every row as wide as the header,
// the target's text intact but defused.
func TestRecordsCSV(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	c := NewRecordsCSV(&buf)
	for _, r := range exportRecords {
		if err := c.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "records.csv.golden"), buf.Bytes())
	rows, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse back: %v", err)
	}
	if len(rows) != len(exportRecords)+1 {
		t.Fatalf("%d rows, want a header and %d records", len(rows), len(exportRecords))
	}
	msg := rows[3][indexOf(t, RecordsCSVHeader, "error_msg")]
	if want := "'" + exportRecords[2].ErrorMsg; msg != want {
		t.Errorf("error_msg cell %q, want %q", msg, want)
	}
}

// TestRecordsCSVSessionColumns: reply_cut and session_calls, columns 43
// and 44 (the last until more came after them), carry each record's own
// values.
func TestRecordsCSVSessionColumns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		r          record.Result
		cut, calls string
	}{
		// A single request: no reply threaded, no recorded session.
		{"single", record.Result{ID: 1}, "false", "0"},
		// A turn whose reply was too long to keep, in a 7-call trace session.
		{"cut trace turn", record.Result{ID: 2, Turn: 3, Session: 1, ReplyCut: true, SessionCalls: 7}, "true", "7"},
		// A conversation turn whose length its class gives: no session_calls.
		{"class turn", record.Result{ID: 3, Turn: 2, Session: 2}, "false", "0"},
	}
	for _, tc := range tests {
		var buf bytes.Buffer
		c := NewRecordsCSV(&buf)
		if err := c.Write(&tc.r); err != nil {
			t.Fatal(err)
		}
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil || len(rows) != 2 {
			t.Fatalf("%s: rows %v, err %v", tc.name, rows, err)
		}
		if got := rows[0][42:44]; got[0] != "reply_cut" || got[1] != "session_calls" {
			t.Errorf("%s: columns 43 and 44 are %v, want reply_cut, session_calls", tc.name, got)
		}
		if cut, calls := rows[1][indexOf(t, RecordsCSVHeader, "reply_cut")], rows[1][indexOf(t, RecordsCSVHeader, "session_calls")]; cut != tc.cut || calls != tc.calls {
			t.Errorf("%s: reply_cut %q session_calls %q, want %q %q", tc.name, cut, calls, tc.cut, tc.calls)
		}
	}
}

// TestSeriesCSV renders the planted windows against a golden file.
func TestSeriesCSV(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	c := NewSeriesCSV(&buf)
	for _, w := range exportWindows {
		if err := c.Write(w); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "series.csv.golden"), buf.Bytes())
}

// TestEmptyCSVHasHeader: a run with nothing in it still gives a CSV a
// spreadsheet opens, with its columns named.
func TestEmptyCSVHasHeader(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		flush func(*bytes.Buffer) error
		want  []string
	}{
		// records.csv of a run that recorded nothing.
		{"records", func(b *bytes.Buffer) error { return NewRecordsCSV(b).Flush() }, RecordsCSVHeader},
		// series.csv of a run shorter than a window.
		{"series", func(b *bytes.Buffer) error { return NewSeriesCSV(b).Flush() }, SeriesCSVHeader},
	}
	for _, tc := range cases {
		var buf bytes.Buffer
		if err := tc.flush(&buf); err != nil {
			t.Fatal(err)
		}
		if got, want := buf.String(), strings.Join(tc.want, ",")+"\n"; got != want {
			t.Errorf("%s: empty CSV is %q, want only the header %q", tc.name, got, want)
		}
	}
}

// TestCSVFromFiles streams real JSONL files through the exporters, and
// names the file when it is missing.
func TestCSVFromFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := filepath.Join(dir, "records.jsonl")
	w, err := rundir.NewJSONLWriter(recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range exportRecords {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var direct, fromFile bytes.Buffer
	c := NewRecordsCSV(&direct)
	for _, r := range exportRecords {
		if err := c.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := RecordsCSVFrom(&fromFile, recs); err != nil {
		t.Fatal(err)
	}
	if direct.String() != fromFile.String() {
		t.Errorf("CSV from records.jsonl differs from the CSV of the records written to it:\n%s\nvs\n%s", fromFile.String(), direct.String())
	}
	err = SeriesCSVFrom(&bytes.Buffer{}, filepath.Join(dir, "series.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "series.jsonl") {
		t.Errorf("missing series.jsonl gave %v, want an error naming it", err)
	}
}

// TestWriteFileLeavesNothingOnError: a failed export does not leave a half
// file (or a temporary one) behind; a good one is readable by all.
func TestWriteFileLeavesNothingOnError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	err := WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "a,b\n"); return err })
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, func(io.Writer) error { return errors.New("disk full") }); err == nil ||
		!strings.Contains(err.Error(), "out.csv") {
		t.Errorf("failed fill gave %v, want an error naming the file", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "out.csv" {
		t.Errorf("directory holds %v, want only the first out.csv", entries)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "a,b\n" {
		t.Errorf("out.csv holds %q (%v), want the first, good export", b, err)
	}
}

// TestJUnit renders passed, failed and unresolvable thresholds (one with
// markup in its expression) and reads the XML back.
func TestJUnit(t *testing.T) {
	t.Parallel()
	s := &record.Summary{Name: "nightly", Started: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
		Thresholds: []record.ThresholdResult{
			{Expr: "ttft_ms.p99 < 2000", Metric: "metrics.ttft_ms.p99", Value: 812.5, Passed: true},
			{Expr: "error_rate < 0.01", Metric: "failure_rate", Value: 0.034},
			{Expr: `classes.<script>x</script>.ttft_ms.p95 < 300`, Error: `no class "<script>x</script>"`},
		}}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, s); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "thresholds.junit.golden"), buf.Bytes())
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit XML does not parse: %v", err)
	}
	if doc.Tests != 3 || doc.Failures != 1 || doc.Errors != 1 || len(doc.Suites[0].Cases) != 3 {
		t.Errorf("counts tests=%d failures=%d errors=%d, want 3, 1, 1", doc.Tests, doc.Failures, doc.Errors)
	}
	if got := doc.Suites[0].Cases[2].Name; got != s.Thresholds[2].Expr {
		t.Errorf("markup did not round-trip: %q", got)
	}
}

// TestInflux renders the windows as line protocol against a golden file; the
// run name needs every tag escape.
func TestInflux(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	s := NewInfluxSeries(&buf, "chat, long=1\nx", time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	for _, w := range exportWindows {
		if err := s.Write(w); err != nil {
			t.Fatal(err)
		}
	}
	golden.Check(t, filepath.Join("testdata", "series.influx.golden"), buf.Bytes())
	if n := strings.Count(buf.String(), "\n"); n != len(exportWindows) {
		t.Errorf("%d lines, want one per window (%d)", n, len(exportWindows))
	}
}

func indexOf(t *testing.T, header []string, name string) int {
	t.Helper()
	for i, h := range header {
		if h == name {
			return i
		}
	}
	t.Fatalf("no column %q", name)
	return -1
}

// TestCSVHeadersDocumented: docs/exports.md prints each CSV's header
// line as the writers write it, so a column added to one is added to the
// other (records.csv's header was four columns behind once).
func TestCSVHeadersDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "exports.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(doc), "\n")
	for _, tc := range []struct {
		file   string
		header []string
	}{
		// One row per request; cached_tokens among the later columns.
		{"records.csv", RecordsCSVHeader},
		// One row per second.
		{"series.csv", SeriesCSVHeader},
	} {
		want := strings.Join(tc.header, ",")
		if !slices.Contains(lines, want) {
			t.Errorf("docs/exports.md does not print %s's header %q", tc.file, want)
		}
	}
}
