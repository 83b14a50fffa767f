package report

import (
	"math/rand/v2"
	"testing"

	"github.com/inferload/inferload/record"
)

// countingWriter counts the bytes written through it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkRecordsParquet exports streamed records of 256 tokens each
// (TTFT about 200 ms, inter-token gaps about 20 ms with jitter, as a
// loaded server gives) and reports the file's bytes per token beside
// records.jsonl's, and the CPU per record.
func BenchmarkRecordsParquet(b *testing.B) {
	const tokens = 256
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]record.Result, 4096)
	for i := range recs {
		ev := make([]int64, tokens)
		t := int64(150_000 + rng.IntN(100_000))
		for k := range ev {
			ev[k] = t
			t += 15_000 + int64(rng.IntN(10_000))
		}
		recs[i] = record.Result{ID: uint64(i + 1), Class: "chat", SendUS: int64(i) * 10_000,
			TTFTUS: ev[0], E2EUS: t, EventsUS: ev, Stream: true, InputTokens: 512, OutputTokens: tokens,
			TokenSource: record.TokensUsage, MaxTokens: tokens, FinishReason: "length", Status: 200,
			BytesOut: 2600, BytesIn: 60_000, TraceID: "0af7651916cd43dd8448eb211c80319c"}
	}
	var jsonBytes int64
	for i := range recs {
		jsonBytes += int64(len(record.AppendResultJSON(nil, &recs[i]))) + 1
	}
	b.ReportAllocs()
	b.ResetTimer()
	var out countingWriter
	for range b.N {
		out.n = 0
		p := NewParquetWriter[RecordRow](&out, "records")
		for i := range recs {
			if err := p.Write(RecordRowOf(&recs[i])); err != nil {
				b.Fatal(err)
			}
		}
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perToken := float64(len(recs) * tokens)
	b.ReportMetric(float64(out.n)/perToken, "parquet-B/token")
	b.ReportMetric(float64(jsonBytes)/perToken, "jsonl-B/token")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}
