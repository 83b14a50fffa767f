package rundir

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/inferload/inferload/record"
)

// BenchmarkRecordBytes writes realistic 256-token streams to a plain
// records.jsonl and to a records.jsonl.zst and reports the file's bytes
// per token (BENCHMARKS.md, "Record size"). Two gap models: every gap
// drawn uniformly from 20–40 ms, and a steady decode whose gaps sit at a
// per-stream 20–40 ms with 1 ms of normal jitter.
func BenchmarkRecordBytes(b *testing.B) {
	for _, model := range []struct {
		name string
		gaps func(rng *rand.Rand, r *record.Result)
	}{
		{"gaps=uniform20-40ms", func(*rand.Rand, *record.Result) {}}, // streamRecord's own
		{"gaps=steady+1ms", steadyGaps},
	} {
		for _, file := range []string{RecordsPlain, Records} {
			b.Run(model.name+"/"+file, func(b *testing.B) {
				path := filepath.Join(b.TempDir(), file)
				w, err := NewJSONLWriter(path)
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, 2))
				tokens := 0
				var id uint64
				for b.Loop() {
					id++
					r := streamRecord(rng, id, 256)
					model.gaps(rng, r)
					if err := w.Write(r); err != nil {
						b.Fatal(err)
					}
					tokens += len(r.EventsUS)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				st, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(st.Size())/float64(tokens), "bytes/token")
			})
		}
	}
}

// steadyGaps redraws r's offsets as a steady decode: one gap per stream
// between 20 and 40 ms, each token off it by normal jitter of σ 1 ms.
func steadyGaps(rng *rand.Rand, r *record.Result) {
	base := 20_000 + rng.Float64()*20_000
	at := r.EventsUS[0]
	for i := range r.EventsUS {
		r.EventsUS[i] = at
		at += int64(base + rng.NormFloat64()*1_000)
	}
	r.E2EUS = at
}

// BenchmarkRecompressRecords re-encodes a run's records
// (INFERLOAD_RECORDS=runs/X/records.jsonl.zst) with their offsets packed
// (events_b64, what the writer writes) and as decimal deltas (events_dus,
// what it wrote before), and compresses each at zstd's fastest and
// "better" levels in frames of 16 KB (about a second of a modest run) and
// 4 MB (the writer's largest), reporting bytes per output token: the
// comparison in BENCHMARKS.md, "Record size", on a real run's gaps.
func BenchmarkRecompressRecords(b *testing.B) {
	path := os.Getenv("INFERLOAD_RECORDS")
	if path == "" {
		b.Skip("set INFERLOAD_RECORDS to a run's records.jsonl.zst")
	}
	var recs []record.Result
	var doneUS []int64
	tokens := 0
	if _, err := ReadRecords(path, func(r *record.Result) error {
		c := *r
		c.EventsUS = slices.Clone(r.EventsUS)
		recs = append(recs, c)
		doneUS = append(doneUS, r.DoneUS())
		tokens += r.OutputTokens
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if tokens == 0 {
		b.Fatalf("%s: no output tokens", path)
	}
	forms := []struct {
		name   string
		append func([]byte, *record.Result) []byte
	}{{"packed", record.AppendCompactResultJSON}, {"decimal-deltas", appendDecimalDeltas}}
	for _, form := range forms {
		var lines [][]byte
		for i := range recs {
			lines = append(lines, append(form.append(nil, &recs[i]), '\n'))
		}
		for _, level := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedBetterCompression} {
			for _, frame := range []int{16 << 10, frameTarget} {
				b.Run(fmt.Sprintf("offsets=%s/level=%s/frame=%dKiB", form.name, level, frame>>10), func(b *testing.B) {
					size := 0
					for b.Loop() {
						size = compressedSize(b, lines, level, frame)
					}
					b.ReportMetric(float64(size)/float64(tokens), "bytes/token")
				})
			}
		}
		// The writer's flush schedule replayed on the records' completion
		// times, at its level: a frame a second (before), and a frame a
		// second with a block ended every 200 ms and the line count after
		// each frame (now); and a frame every 200 ms, the simpler way to
		// the same loss bound.
		for _, sched := range []struct {
			name           string
			blockUS, frame int64
		}{{"frame=1s", 0, 1e6}, {"frame=1s+block=200ms", 200_000, 1e6}, {"frame=200ms", 0, 200_000}} {
			b.Run(fmt.Sprintf("offsets=%s/level=fastest/%s", form.name, sched.name), func(b *testing.B) {
				size := 0
				for b.Loop() {
					size = scheduledSize(b, lines, doneUS, sched.blockUS, sched.frame, sched.blockUS > 0)
				}
				b.ReportMetric(float64(size)/float64(tokens), "bytes/token")
			})
		}
	}
}

// scheduledSize is the size of lines compressed as the writer does at its
// level, a block ended (blockUS > 0) and a frame ended each time the
// records' completions cross a multiple of blockUS or frameUS, with the
// line count after each frame when counted.
func scheduledSize(b *testing.B, lines [][]byte, doneUS []int64, blockUS, frameUS int64, counted bool) int {
	var out bytes.Buffer
	enc, err := zstd.NewWriter(&out, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(frameTarget), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		b.Fatal(err)
	}
	endFrame := func() {
		if err := enc.Close(); err != nil {
			b.Fatal(err)
		}
		enc.Reset(&out)
		if counted {
			out.Write(appendLineCount(nil, 0))
		}
	}
	var frameAt, blockAt int64
	for i, l := range lines {
		switch t := doneUS[i]; {
		case t/frameUS > frameAt:
			frameAt, blockAt = t/frameUS, t/max(blockUS, 1)
			endFrame()
		case blockUS > 0 && t/blockUS > blockAt:
			blockAt = t / blockUS
			if err := enc.Flush(); err != nil {
				b.Fatal(err)
			}
		}
		_, _ = enc.Write(l)
	}
	endFrame()
	return out.Len()
}

// compressedSize is the size of lines compressed at level, a frame ended
// after every frame bytes of input as the writer ends them.
func compressedSize(b *testing.B, lines [][]byte, level zstd.EncoderLevel, frame int) int {
	var out bytes.Buffer
	enc, err := zstd.NewWriter(&out, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(frameTarget), zstd.WithEncoderLevel(level))
	if err != nil {
		b.Fatal(err)
	}
	in := 0
	for _, l := range lines {
		_, _ = enc.Write(l)
		if in += len(l); in >= frame {
			_ = enc.Close()
			enc.Reset(&out)
			in = 0
		}
	}
	if err := enc.Close(); err != nil {
		b.Fatal(err)
	}
	return out.Len()
}

// appendDecimalDeltas writes r as records.jsonl.zst held it before the
// packed form: offsets as decimal deltas under "events_dus", where the
// packed form puts its field.
func appendDecimalDeltas(dst []byte, r *record.Result) []byte {
	c := *r
	c.EventsUS = nil
	line := record.AppendCompactResultJSON(nil, &c)
	at := bytes.Index(line, []byte(`,"stream":`))
	dst = append(dst, line[:at]...)
	if len(r.EventsUS) > 0 {
		dst = append(dst, `,"events_dus":[`...)
		prev := int64(0)
		for i, v := range r.EventsUS {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, v-prev, 10)
			prev = v
		}
		dst = append(dst, ']')
	}
	return append(dst, line[at:]...)
}
