package record_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// TestRoundTrip: records written through the JSONL writer and read back
// aggregate to a byte-identical summary, and summary.json itself survives
// WriteSummary → ReadSummary unchanged.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := record.RandomRecords(1500, 3)
	info := record.RunInfo{Name: "rt", Mode: record.ModeClosed, WarmupEndUS: 1e6, EndUS: 16e6}
	w, err := rundir.NewJSONLWriter(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	live := record.NewAggregate()
	for i := range recs {
		live.Add(&recs[i])
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rebuilt := record.NewAggregate()
	if _, err := rundir.ReadRecords(filepath.Join(dir, "records.jsonl"), func(r *record.Result) error { rebuilt.Add(r); return nil }); err != nil {
		t.Fatal(err)
	}
	want := encode(t, live.Summary(info))
	if got := encode(t, rebuilt.Summary(info)); !bytes.Equal(got, want) {
		t.Fatalf("rebuilt summary differs:\n%s\nwant\n%s", got, want)
	}
	path := filepath.Join(dir, "summary.json")
	if err := rundir.WriteSummary(path, live.Summary(info)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, want) {
		t.Errorf("summary.json differs from record.EncodeSummary")
	}
	back, err := rundir.ReadSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := encode(t, back); !bytes.Equal(got, want) {
		t.Errorf("summary.json did not survive a read:\n%s\nwant\n%s", got, want)
	}
}

func encode(t *testing.T, s *record.Summary) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := record.EncodeSummary(&buf, s); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
