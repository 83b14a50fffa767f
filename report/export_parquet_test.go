package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// fillDistinct sets every field reachable from v to a value no other field
// has (numbers count up, strings name their number, bools are true, slices
// get two elements, pointers are allocated), so a field copied into the
// wrong column, or not copied at all, shows up when the two encodings are
// compared.
func fillDistinct(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillDistinct(v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			fillDistinct(v.Field(i), n)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fillDistinct(v.Index(0), n)
		fillDistinct(v.Index(1), n)
	case reflect.Array:
		for i := range v.Len() {
			fillDistinct(v.Index(i), n)
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString("s" + strconv.Itoa(*n))
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	default:
		panic("fillDistinct: add a case for " + v.Kind().String())
	}
}

// readParquet reads every row of a Parquet file written by ParquetWriter.
func readParquet[T any](t *testing.T, data []byte) []T {
	t.Helper()
	rows, err := parquet.Read[T](bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("reading the Parquet file back: %v", err)
	}
	return rows
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParquetRowsMirrorJSON writes records and windows with every field
// set (and the planted export cases) to Parquet, reads the file back and
// compares each row's JSON with the JSON the run directory holds: any field
// of record.Result or record.Window missing from the Parquet row, or
// copied into another column, makes them differ.
func TestParquetRowsMirrorJSON(t *testing.T) {
	t.Parallel()
	n := 0
	var full record.Result
	fillDistinct(reflect.ValueOf(&full).Elem(), &n)
	recs := append([]*record.Result{&full}, exportRecords...)

	var buf bytes.Buffer
	p := NewParquetWriter[RecordRow](&buf, "records")
	for _, r := range recs {
		if err := p.Write(RecordRowOf(r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	rows := readParquet[RecordRow](t, buf.Bytes())
	if len(rows) != len(recs) {
		t.Fatalf("read %d rows, wrote %d", len(rows), len(recs))
	}
	for i, r := range recs {
		// Parquet has no "absent" list: an empty one reads back as nil.
		if got, want := jsonOf(t, rows[i]), jsonOf(t, r); got != want {
			t.Errorf("record %d:\nparquet %s\njsonl   %s", r.ID, got, want)
		}
	}

	var full2 record.Window
	fillDistinct(reflect.ValueOf(&full2).Elem(), &n)
	wins := append([]*record.Window{&full2}, exportWindows...)
	buf.Reset()
	pw := NewParquetWriter[WindowRow](&buf, "series")
	for _, w := range wins {
		if err := pw.Write(WindowRowOf(w)); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	wrows := readParquet[WindowRow](t, buf.Bytes())
	for i, w := range wins {
		if got, want := jsonOf(t, wrows[i]), jsonOf(t, w); got != want {
			t.Errorf("window %d:\nparquet %s\njsonl   %s", w.TS, got, want)
		}
	}
}

// TestParquetFromRunFiles streams records.jsonl and series.jsonl through
// the exporters across more than one row group and one write batch, and
// checks the file's schema names the columns a notebook will ask for.
func TestParquetFromRunFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := filepath.Join(dir, rundir.Records)
	w, err := rundir.NewJSONLWriter(recs)
	if err != nil {
		t.Fatal(err)
	}
	const many = parquetRowGroup + 1500 // two row groups, a part batch
	for i := range many {
		r := *exportRecords[i%len(exportRecords)]
		r.ID = uint64(i + 1)
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := RecordsParquetFrom(&buf, recs); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.NumRows(); got != many {
		t.Errorf("file has %d rows, want %d", got, many)
	}
	if got := len(f.RowGroups()); got != 2 {
		t.Errorf("file has %d row groups, want 2 (at most %d rows each)", got, parquetRowGroup)
	}
	schema := f.Schema().String()
	for _, col := range []string{"ttft_us", "e2e_us", "events_us", "class", "error", "trace_id"} {
		if !strings.Contains(schema, " "+col+" ") && !strings.Contains(schema, " "+col+" (") {
			t.Errorf("schema has no column %q:\n%s", col, schema)
		}
	}
	rows := readParquet[RecordRow](t, buf.Bytes())
	if rows[many-1].ID != many || rows[0].TTFTUS != exportRecords[0].TTFTUS {
		t.Errorf("rows out of order or altered: first %+v, last id %d", rows[0], rows[many-1].ID)
	}

	err = SeriesParquetFrom(&bytes.Buffer{}, filepath.Join(dir, rundir.Series))
	if err == nil || !strings.Contains(err.Error(), rundir.Series) {
		t.Errorf("missing series.jsonl gave %v, want an error naming it", err)
	}
}
