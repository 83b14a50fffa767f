package rundir

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

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
