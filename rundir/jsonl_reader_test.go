package rundir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "records.jsonl")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadRecords covers what a records.jsonl can look like after a run,
// including one cut short by SIGKILL.
func TestReadRecords(t *testing.T) {
	t.Parallel()
	const r1, r2 = `{"id":1,"send_us":5,"e2e_us":9,"stream":true,"input_tokens":1,"output_tokens":2}`, `{"id":2,"e2e_us":7}`
	tests := []struct {
		name    string
		content string
		ids     []uint64
		want    ReadStats
		errHas  string // "" means no error
	}{
		// Two whole lines: both read.
		{"whole file", r1 + "\n" + r2 + "\n", []uint64{1, 2}, ReadStats{Lines: 2, Values: 2}, ""},
		// Killed mid-line: the cut line is counted and skipped, not an error.
		{"truncated last line", r1 + "\n" + r2[:9], []uint64{1}, ReadStats{Lines: 2, Values: 1, Truncated: 1}, ""},
		// Killed just before the final newline: the line is whole and kept.
		{"last line without newline", r1 + "\n" + r2, []uint64{1, 2}, ReadStats{Lines: 2, Values: 2}, ""},
		// Blank lines and CRLF endings are harmless.
		{"blank lines and CRLF", "\n" + r1 + "\r\n\n" + r2 + "\n", []uint64{1, 2}, ReadStats{Lines: 2, Values: 2}, ""},
		// A damaged line in the middle is corruption, named by its line number.
		{"corrupt middle line", r1 + "\n{\"id\":oops}\n" + r2 + "\n", []uint64{1}, ReadStats{Lines: 2, Values: 1}, "line 2: corrupt record"},
		// A damaged last line that does end in a newline is corruption too, not truncation.
		{"corrupt terminated last line", r1 + "\n" + r2[:9] + "\n", []uint64{1}, ReadStats{Lines: 2, Values: 1}, "line 2: corrupt record"},
		// A wrong type for a field is corruption.
		{"wrong field type", `{"id":"one"}` + "\n", nil, ReadStats{Lines: 1}, "line 1: corrupt record"},
		// An empty file holds no records and is not an error.
		{"empty file", "", nil, ReadStats{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var ids []uint64
			st, err := ReadRecords(writeFile(t, tt.content), func(r *record.Result) error {
				ids = append(ids, r.ID)
				return nil
			})
			if (err == nil) != (tt.errHas == "") || (err != nil && !strings.Contains(err.Error(), tt.errHas)) {
				t.Errorf("err = %v, want containing %q", err, tt.errHas)
			}
			if st != tt.want || !slices.Equal(ids, tt.ids) {
				t.Errorf("stats %+v ids %v, want %+v %v", st, ids, tt.want, tt.ids)
			}
		})
	}
}

// TestReadErrors: a missing file and a callback error are reported with
// context, and the callback error stays inspectable.
func TestReadErrors(t *testing.T) {
	t.Parallel()
	if _, err := ReadEvents(filepath.Join(t.TempDir(), "missing.jsonl"), func(*record.Event) error { return nil }); err == nil {
		t.Error("missing file: no error")
	}
	stop := errors.New("stop here")
	path := writeFile(t, `{"time_us":1,"kind":"note"}`+"\n"+`{"time_us":2,"kind":"note"}`+"\n")
	st, err := ReadEvents(path, func(e *record.Event) error {
		if e.TimeUS == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || !strings.Contains(err.Error(), "line 2") || st.Values != 2 {
		t.Errorf("callback error: %+v, %v", st, err)
	}
}

// TestReadLongLine: a record far bigger than the read buffer (a long
// stream's events) is read whole.
func TestReadLongLine(t *testing.T) {
	t.Parallel()
	r := record.Result{ID: 3, EventsUS: make([]int64, 100_000)}
	for i := range r.EventsUS {
		r.EventsUS[i] = int64(i) * 12_345
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := NewJSONLWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got *record.Result
	if _, err := ReadRecords(path, func(r *record.Result) error { got = r; return nil }); err != nil {
		t.Fatal(err)
	}
	if got == nil || len(got.EventsUS) != 100_000 || got.EventsUS[99_999] != 99_999*12_345 {
		t.Errorf("long record not read back whole")
	}
}

// TestReadSummaryErrors: unreadable or future summaries are refused with a reason.
func TestReadSummaryErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, errHas string
	}{
		{"not JSON", "{", "unexpected end"},                                               // damaged file
		{"future schema", `{"schema_version": 99}`, "schema_version 99 is not supported"}, // written by a newer build
		{"no schema", `{}`, "schema_version 0"},                                           // not a summary at all
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := ReadSummary(writeFile(t, tt.content)); err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("err = %v, want containing %q", err, tt.errHas)
			}
		})
	}
}

// compressedSeed is a two-frame compressed records file.
func compressedSeed(f *testing.F) []byte {
	path := filepath.Join(f.TempDir(), Records)
	w, err := NewJSONLWriter(path)
	if err != nil {
		f.Fatal(err)
	}
	for i, r := range sampleRecords(9, 5) {
		if err := w.Write(&r); err != nil {
			f.Fatal(err)
		}
		if i == 4 {
			_ = w.Flush()
		}
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzReadRecords: whatever bytes a records file holds, plain or
// compressed (junk skipped and counted), finding its frames, reading and
// aggregating them never panics or hangs, and the summary always encodes
// (no NaN or infinity can reach summary.json).
func FuzzReadRecords(f *testing.F) {
	f.Add([]byte(`{"id":1,"send_us":5,"e2e_us":9,"stream":true,"ttft_us":3,"events_us":[3,5,9],"output_tokens":3}` + "\n"))
	f.Add([]byte(`{"id":1,"e2e_us":-9,"error":"http_5xx"}` + "\n" + `{"id":2,"se`))
	z := compressedSeed(f)
	f.Add(z)
	f.Add(z[:len(z)-3])
	f.Add(append(bytes.Clone(z), make([]byte, 64)...))           // zeros after the last frame
	f.Add(append(append([]byte("junk"), z...), z[:len(z)/2]...)) // junk before, a cut frame after
	f.Fuzz(func(t *testing.T, data []byte) {
		agg := record.NewAggregate()
		series := record.NewSeries(func(record.Window) {})
		if n := CompleteFrames(data); n < 0 || n > len(data) {
			t.Fatalf("CompleteFrames = %d of %d bytes", n, len(data))
		}
		if _, n, _ := DecodeFrames(nil, data); n < 0 || n > len(data) {
			t.Fatalf("DecodeFrames used %d of %d bytes", n, len(data))
		}
		st, err := decodeFile("fuzz", bytes.NewReader(data), func(r *record.Result) error {
			agg.Add(r)
			series.Add(r)
			return nil
		})
		if err == nil && st.Truncated > 1 {
			t.Errorf("Truncated = %d", st.Truncated)
		}
		if st.DroppedBytes < 0 || st.DroppedBytes > int64(len(data)) || st.Missing < 0 {
			t.Errorf("dropped %d of %d bytes, %d missing", st.DroppedBytes, len(data), st.Missing)
		}
		series.Flush()
		s := agg.Summary(record.RunInfo{EndUS: 1e6})
		if s.Requests.Total != int64(st.Values) {
			t.Errorf("total %d, read %d", s.Requests.Total, st.Values)
		}
		if err := record.EncodeSummary(new(bytes.Buffer), s); err != nil {
			t.Errorf("summary does not encode: %v", err)
		}
	})
}
