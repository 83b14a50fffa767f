package rundir

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/inferload/inferload/record"
)

// sampleRecords are records of every shape the compact form must carry:
// no events, one, zero and negative gaps, extremes, a capped stream's tail,
// then realistic streams.
func sampleRecords(n, tokens int) []record.Result {
	recs := []record.Result{
		{ID: 1},
		{ID: 2, EventsUS: []int64{}},
		{ID: 3, EventsUS: []int64{7}, Stream: true},
		{ID: 4, EventsUS: []int64{100, 100, 90, -5, 0}},
		{ID: 5, EventsUS: []int64{math.MinInt64, math.MaxInt64, 0}},
		{ID: 6, EventsUS: []int64{5, 9}, EventsTail: &record.EventsTail{Dropped: 3, LastUS: 99, Gaps: [][2]int64{{4, 2}, {7, 1}}}},
		{ID: 7, Error: record.ErrHTTP5xx, ErrorMsg: "boom \"quoted\"\n", Status: 503},
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := len(recs); i < n; i++ {
		recs = append(recs, *streamRecord(rng, uint64(i+1), tokens))
	}
	return recs
}

// streamRecord is a realistic streamed reply: tokens 20–40 ms apart with
// jitter, after a TTFT of 100–300 ms.
func streamRecord(rng *rand.Rand, id uint64, tokens int) *record.Result {
	events := make([]int64, tokens)
	at := int64(100_000 + rng.IntN(200_000))
	for i := range events {
		events[i] = at
		at += int64(20_000 + rng.IntN(20_000))
	}
	return &record.Result{
		ID: id, Class: "default", SendUS: int64(id) * 1_000, TTFTUS: events[0], E2EUS: at,
		EventsUS: events, Stream: true, InputTokens: 512, OutputTokens: tokens, TokenSource: record.TokensUsage,
		PromptTokensSent: 512, MaxTokens: tokens, FinishReason: "length", Status: 200,
		BytesOut: 2400, BytesIn: int64(tokens) * 240, TraceID: "0af7651916cd43dd8448eb211c80319c",
	}
}

// plainCopy is r as the plain form reads back: what every reader of a
// compressed file must see too.
func plainCopy(t *testing.T, r *record.Result) record.Result {
	t.Helper()
	var out record.Result
	if err := json.Unmarshal(record.AppendResultJSON(nil, r), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func writeRecords(t *testing.T, w *JSONLWriter, recs []record.Result) {
	t.Helper()
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
}

func readAll(t *testing.T, path string) ([]record.Result, ReadStats) {
	t.Helper()
	var got []record.Result
	st, err := ReadRecords(path, func(r *record.Result) error { got = append(got, *r); return nil })
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return got, st
}

// TestCompressedRoundTrip: records written to a .zst file read back equal
// to the originals, the file is zstd with the compact form inside, and it
// is a fraction of the plain file's size.
func TestCompressedRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := sampleRecords(300, 256)
	for _, name := range []string{Records, RecordsPlain} {
		w, err := NewJSONLWriter(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		writeRecords(t, w, recs[:150])
		if err := w.Flush(); err != nil { // a frame boundary mid-file
			t.Fatal(err)
		}
		writeRecords(t, w, recs[150:])
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, st := readAll(t, filepath.Join(dir, name))
		if st != (ReadStats{Lines: len(recs), Values: len(recs)}) || len(got) != len(recs) {
			t.Fatalf("%s: read %+v", name, st)
		}
		for i := range recs {
			if want := plainCopy(t, &recs[i]); !reflect.DeepEqual(got[i], want) {
				t.Errorf("%s: record %d read back as\n%+v\nwant %+v", name, i, got[i], want)
			}
		}
	}
	z, _ := os.ReadFile(filepath.Join(dir, Records))
	plain, _ := os.ReadFile(filepath.Join(dir, RecordsPlain))
	if !IsZstd(z) || CompleteFrames(z) != len(z) {
		t.Fatalf("%s is not whole zstd frames", Records)
	}
	inside, n, err := DecodeFrames(nil, z)
	if err != nil || n != len(z) || !bytes.Contains(inside, []byte(`"events_b64":"`)) || bytes.Contains(inside, []byte(`"events_us"`)) {
		t.Errorf("decoded %d of %d bytes (%v); want the compact form throughout", n, len(z), err)
	}
	if len(z)*3 > len(plain) {
		t.Errorf("compressed %d bytes, plain %d: want under a third", len(z), len(plain))
	}
}

// TestCompressedSurvivesCut: the bytes of a compressed file copied while
// the writer runs (what a SIGKILL leaves) read back every record flushed
// before the copy. Cutting the file anywhere gives a prefix of the records,
// whole frames only, with the cut counted as Truncated and never an error.
func TestCompressedSurvivesCut(t *testing.T) {
	t.Parallel()
	recs := sampleRecords(60, 4)
	_, snap, killed := writeKilled(t, recs, (*JSONLWriter).Flush)
	if got, st := readAll(t, snap); len(got) != 40 || st.Truncated != 0 || got[39].ID != recs[39].ID {
		t.Fatalf("copy taken after two flushes read %d records (%+v), want the 40 flushed", len(got), st)
	}
	for cut := range len(killed) {
		writeBytes(t, snap, killed[:cut])
		got, st := readAll(t, snap)
		want := 20 * dataFrames(killed[:cut])
		// A cut inside a later frame's magic number is junk, not a frame;
		// inside the first, the file is not zstd, so a cut plain line.
		cutFrame := 0
		if rest := cut - CompleteFrames(killed[:cut]); rest >= 4 || rest == cut && cut > 0 {
			cutFrame = 1
		}
		if len(got) != want || st.Truncated != cutFrame {
			t.Fatalf("cut at %d of %d: read %d records (%+v), want %d", cut, len(killed), len(got), st, want)
		}
	}
}

// dataFrames counts the whole zstd frames at the start of b, not the
// skippable ones (the line counts).
func dataFrames(b []byte) int {
	n := 0
	for at := 0; ; {
		l, err := frameLen(b[at:])
		if err != nil || l == 0 {
			return n
		}
		if IsZstd(b[at:]) {
			n++
		}
		at += l
	}
}

// writeKilled writes recs (60) to a records file: 20 and a Flush (a whole
// frame), 20 and second (the flush under test), the rest left buffered.
// It returns the file, closed, and a copy of the bytes it held before the
// close (what a SIGKILL leaves) in snap, and those bytes.
func writeKilled(t *testing.T, recs []record.Result, second func(*JSONLWriter) error) (path, snap string, killed []byte) {
	t.Helper()
	dir := t.TempDir()
	path = filepath.Join(dir, Records)
	w, err := NewJSONLWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	writeRecords(t, w, recs[:20])
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	writeRecords(t, w, recs[20:40])
	if err := second(w); err != nil {
		t.Fatal(err)
	}
	writeRecords(t, w, recs[40:]) // buffered, not flushed: lost to a kill
	killed, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	snap = filepath.Join(dir, "killed.zst")
	writeBytes(t, snap, killed)
	return path, snap, killed
}

func writeBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRecordsFile: a run's records are found in either form; a directory
// with neither names the file runs write today.
func TestRecordsFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		present []string
		want    string
	}{
		{"current run", []string{Records}, Records},         // compressed, as written today
		{"older run", []string{RecordsPlain}, RecordsPlain}, // plain, from before compression
		{"both", []string{RecordsPlain, Records}, Records},  // the compressed file is the run's own
		{"neither", nil, Records},                           // the error will name records.jsonl.zst
	}
	for _, tt := range tests {
		dir := t.TempDir()
		for _, f := range tt.present {
			writeBytes(t, filepath.Join(dir, f), nil)
		}
		if got := RecordsFile(dir); got != filepath.Join(dir, tt.want) {
			t.Errorf("%s: RecordsFile = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestCompressedFramesBounded: a long burst with no flush still ends a
// frame every frameTarget bytes of input, so no reader holds more.
func TestCompressedFramesBounded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), Records)
	w, err := newJSONLWriter(path, 1<<40, nil) // no background flush
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var in int
	for id := uint64(1); in < 3*frameTarget; id++ {
		r := streamRecord(rng, id, 256)
		in += len(record.AppendCompactResultJSON(nil, r)) + 1
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	on, _ := os.ReadFile(path)
	if frames := countFrames(on); frames < 2 {
		t.Errorf("%d bytes of input and no flush left %d whole frames on disk, want at least 2", in, frames)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func countFrames(b []byte) int {
	n := 0
	for len(b) > 0 {
		l, err := frameLen(b)
		if err != nil || l == 0 {
			break
		}
		b, n = b[l:], n+1
	}
	return n
}
