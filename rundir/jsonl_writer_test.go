package rundir

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestWriterConcurrent: many goroutines writing at once produce whole,
// parseable lines, none lost or interleaved.
func TestWriterConcurrent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "records.jsonl")
	w, err := NewJSONLWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 250
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				r := record.Result{ID: uint64(g*each + i), EventsUS: []int64{1, 2, 3}, Stream: true}
				if err := w.Write(&r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	seen := make(map[uint64]bool)
	st, err := ReadRecords(path, func(r *record.Result) error {
		if seen[r.ID] || len(r.EventsUS) != 3 {
			t.Errorf("record %d duplicated or damaged: %+v", r.ID, r)
		}
		seen[r.ID] = true
		return nil
	})
	if err != nil || st.Values != writers*each || st.Truncated != 0 {
		t.Errorf("read back %+v, %v; want %d whole records", st, err, writers*each)
	}
}

// TestWriterFlushesEverySecond: with no Flush or Close, a written line
// reaches the file within the default interval, which is what bounds a
// SIGKILL's loss to the last second.
func TestWriterFlushesEverySecond(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	flushed := make(chan struct{}, 1)
	w, err := newJSONLWriter(path, FlushInterval, func() {
		select {
		case flushed <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write(record.Event{TimeUS: 5, Kind: record.EventNote, Message: "hi"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Fatalf("line reached the file before any flush: %q", b)
	}
	select {
	case <-flushed:
	case <-time.After(FlushInterval + 2*time.Second):
		t.Fatal("no background flush within the interval")
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != `{"time_us":5,"kind":"note","message":"hi"}`+"\n" {
		t.Errorf("file after background flush = %q, %v", b, err)
	}
}

// TestWriterErrors covers the failure paths: each must be reported and
// must never leave a partial line behind.
func TestWriterErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Opening inside a missing directory names the problem.
	if _, err := NewJSONLWriter(filepath.Join(dir, "no", "such", "x.jsonl")); err == nil {
		t.Error("open in a missing directory succeeded")
	}
	path := filepath.Join(dir, "r.jsonl")
	w, err := NewJSONLWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	// A value JSON cannot encode is refused whole; the next line is intact.
	if err := w.Write(map[string]any{"bad": make(chan int)}); err == nil || !strings.Contains(err.Error(), "encode") {
		t.Errorf("unencodable value: err = %v", err)
	}
	if err := w.Write(&record.Result{ID: 9}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Close twice is harmless; Write after Close is refused.
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Write(&record.Result{}); !errors.Is(err, ErrWriterClosed) {
		t.Errorf("Write after Close: err = %v, want ErrWriterClosed", err)
	}
	b, _ := os.ReadFile(path)
	if want := `{"id":9,"send_us":0,"e2e_us":0,"stream":false,"input_tokens":0,"output_tokens":0}` + "\n"; string(b) != want {
		t.Errorf("file = %q, want %q", b, want)
	}
}

// TestWriterAppends: reopening a log appends rather than truncating, so a
// resumed writer never destroys records.
func TestWriterAppends(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "r.jsonl")
	for id := range uint64(2) {
		w, err := NewJSONLWriter(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(&record.Result{ID: id}); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(path)
	if n := bytes.Count(b, []byte("\n")); n != 2 {
		t.Errorf("file has %d lines, want 2: %q", n, b)
	}
}

func benchResult() *record.Result {
	events := make([]int64, 128)
	for i := range events {
		events[i] = int64(250_000 + i*21_337)
	}
	return &record.Result{
		ID: 123456, Class: "default", SendUS: 98_765_432, TTFTUS: events[0], E2EUS: events[127] + 1500,
		EventsUS: events, Stream: true, InputTokens: 512, OutputTokens: 128, TokenSource: record.TokensUsage,
		PromptTokensSent: 512, MaxTokens: 128, IgnoreEOS: true, FinishReason: "length", Status: 200,
		BytesOut: 2400, BytesIn: 31000,
	}
}

// BenchmarkJSONLWriter appends one 128-event record, to a plain file and
// to a compressed one (the compression's CPU is in the second).
func BenchmarkJSONLWriter(b *testing.B) {
	for _, name := range []string{RecordsPlain, Records} {
		b.Run(name, func(b *testing.B) {
			w, err := NewJSONLWriter(filepath.Join(b.TempDir(), name))
			if err != nil {
				b.Fatal(err)
			}
			r := benchResult()
			b.ReportAllocs()
			for b.Loop() {
				if err := w.Write(r); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// TestLargestRecordReadsBack: the biggest record the client can produce (a
// full MaxEventsKept offsets of 19 digits, a tail of every distinct gap,
// the longest error message) is written and read back whole, and a line
// past MaxLineBytes is refused at write time instead of making the file
// unreadable.
func TestLargestRecordReadsBack(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), Records)
	w, err := NewJSONLWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	big := &record.Result{ID: 1, EventsUS: make([]int64, record.MaxEventsKept), ErrorMsg: strings.Repeat("é", 120)}
	for i := range big.EventsUS {
		big.EventsUS[i] = math.MaxInt64 - int64(i)
	}
	big.EventsTail = &record.EventsTail{Dropped: math.MaxInt32, LastUS: math.MaxInt64}
	for g := int64(1); g < 3_600_000_000; g = g*1001/1000 + 1 {
		big.EventsTail.Gaps = append(big.EventsTail.Gaps, [2]int64{g, math.MaxInt32})
	}
	if err := w.Write(big); err != nil {
		t.Fatalf("write the largest record: %v", err)
	}
	huge := map[string]string{"x": strings.Repeat("a", MaxLineBytes)}
	if err := w.Write(huge); err == nil || !strings.Contains(err.Error(), "longer than a reader accepts") {
		t.Fatalf("oversized line: got %v, want a refusal", err)
	}
	if err := w.Write(&record.Result{ID: 2}); err != nil {
		t.Fatalf("a refused line must not poison the writer: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	if _, err := ReadRecords(path, func(r *record.Result) error {
		ids = append(ids, r.ID)
		if r.ID == 1 && (len(r.EventsUS) != record.MaxEventsKept || len(r.EventsTail.Gaps) != len(big.EventsTail.Gaps)) {
			t.Errorf("record 1 read back with %d offsets and %d gaps", len(r.EventsUS), len(r.EventsTail.Gaps))
		}
		return nil
	}); err != nil {
		t.Fatalf("read back: %v", err)
	}
	if len(ids) != 2 {
		t.Fatalf("read records %v, want 1 and 2", ids)
	}
}
