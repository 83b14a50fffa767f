package rundir

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/inferload/inferload/record"
)

// threeFrames writes 60 records in three frames of 20 and returns the
// file's bytes and where each data frame starts and ends.
func threeFrames(t *testing.T) ([]byte, [][2]int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), Records)
	w, err := NewJSONLWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := sampleRecords(60, 64)
	for i := 0; i < 60; i += 20 {
		writeRecords(t, w, recs[i:i+20])
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var frames [][2]int
	for at := 0; at < len(b); {
		l, err := frameLen(b[at:])
		if err != nil || l == 0 {
			t.Fatalf("byte %d of %d: not a whole frame (%v)", at, len(b), err)
		}
		if IsZstd(b[at:]) {
			frames = append(frames, [2]int{at, at + l})
		}
		at += l
	}
	if len(frames) != 3 {
		t.Fatalf("%d data frames, want 3", len(frames))
	}
	return b, frames
}

// TestCompressedDamageKeepsGoodRecords: whatever damage a crash or a
// disk leaves in a records file, every good record is read, the bytes
// that held none are counted, and the records known lost (from the
// writer's line counts after each frame) are counted; never an error.
func TestCompressedDamageKeepsGoodRecords(t *testing.T) {
	t.Parallel()
	good, frames := threeFrames(t)
	mid := frames[1]
	zeros := make([]byte, 4096)
	tests := []struct {
		name    string
		damage  func(b []byte) []byte
		ids     []uint64 // first and last ID of each run of records read
		dropped int64
		missing int64
		cut     int
	}{
		// What a filesystem can leave after a crash: zeros past the end.
		{"4 KiB of zeros after the last frame", func(b []byte) []byte { return append(b, zeros...) },
			[]uint64{1, 60}, 4096, 0, 0},
		{"text after the last frame", func(b []byte) []byte { return append(b, "not a frame at all"...) },
			[]uint64{1, 60}, 18, 0, 0},
		// A flipped byte fails the middle frame's checksum: its 20
		// records are lost, counted by the next frame's line count.
		{"a byte flipped in the middle frame", func(b []byte) []byte { b[(mid[0]+mid[1])/2] ^= 0xff; return b },
			[]uint64{1, 20, 41, 60}, int64(mid[1] - mid[0]), 20, 0},
		// Zeros where the middle frame was: the scan finds the next frame.
		{"the middle frame zeroed", func(b []byte) []byte { copy(b[mid[0]:mid[1]], make([]byte, mid[1]-mid[0])); return b },
			[]uint64{1, 20, 41, 60}, int64(mid[1] - mid[0]), 20, 0},
		{"garbage between frames", func(b []byte) []byte {
			return append(append(b[:mid[0]:mid[0]], "garbage"...), b[mid[0]:]...)
		}, []uint64{1, 60}, 7, 0, 0},
		// Cut inside the last frame: the whole frames before it are read,
		// the cut frame's bytes are counted, the cut is reported.
		{"cut in half inside the last frame", func(b []byte) []byte { return b[:(frames[2][0]+frames[2][1])/2] },
			[]uint64{1, 40}, int64((frames[2][1] - frames[2][0]) / 2), 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), Records)
			writeBytes(t, p, tt.damage(bytes.Clone(good)))
			got, st := readAll(t, p)
			if runs := idRuns(got); !slices.Equal(runs, tt.ids) {
				t.Errorf("read IDs %v, want %v", runs, tt.ids)
			}
			if st.DroppedBytes != tt.dropped || st.Missing != tt.missing || st.Truncated != tt.cut {
				t.Errorf("stats %+v: want %d bytes dropped, %d records missing, truncated %d", st, tt.dropped, tt.missing, tt.cut)
			}
		})
	}
}

// idRuns is the first and last ID of each run of consecutive IDs.
func idRuns(recs []record.Result) []uint64 {
	var runs []uint64
	for i, r := range recs {
		if i == 0 || r.ID != recs[i-1].ID+1 {
			if i > 0 {
				runs = append(runs, recs[i-1].ID)
			}
			runs = append(runs, r.ID)
		}
	}
	if len(recs) > 0 {
		runs = append(runs, recs[len(recs)-1].ID)
	}
	return runs
}

// TestBlockFlushReadsBackWithoutItsFrame: a background flush ends a zstd
// block, not the frame; a copy of the file taken then (what SIGKILL
// leaves) reads back every record flushed, the frame it ends inside
// counted as cut but no byte of it dropped.
func TestBlockFlushReadsBackWithoutItsFrame(t *testing.T) {
	t.Parallel()
	recs := sampleRecords(60, 64)
	path, snap, _ := writeKilled(t, recs, func(w *JSONLWriter) error { // the background flush
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.flushBlockLocked()
	})
	got, st := readAll(t, snap)
	if len(got) != 40 || got[39].ID != recs[39].ID || st.Truncated != 1 || st.DroppedBytes != 0 {
		t.Errorf("after a block flush read %d records (%+v), want the 40 flushed, the frame cut, nothing dropped", len(got), st)
	}
	if got, st := readAll(t, path); len(got) != 60 || st != (ReadStats{Lines: 60, Values: 60}) {
		t.Errorf("closed file: read %d records (%+v), want 60 and a clean read", len(got), st)
	}
}
