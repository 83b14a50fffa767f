package distributed

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
)

// BenchmarkCollectorIngest measures what the collector spends per record
// a segment streams to it: one-second uploads of 1,000 records of a
// 128-token streamed reply each (about 1.4 KB a record), over HTTP on
// loopback, appended to the segment's file. b.N counts records; the
// figure bounds how many records a second one collector takes in.
// "files" only appends; "live" also decodes every record for the live
// view and adds it to two aggregates (the whole run's and its segment's),
// as inferload collect does.
func BenchmarkCollectorIngest(b *testing.B) {
	b.Run("files", func(b *testing.B) { benchIngest(b, nil) })
	all, seg := record.NewAggregate(), record.NewAggregate()
	b.Run("live", func(b *testing.B) {
		benchIngest(b, &Feed{Record: func(_ int, r *record.Result) { all.Add(r); seg.Add(r) }})
	})
}

func benchIngest(b *testing.B, feed *Feed) {
	_, srv := serveCollector(b, CollectorConfig{Segments: 1, Now: time.Now, Feed: feed})
	const perUpload = 1000
	var chunk bytes.Buffer
	events := make([]int64, 128)
	for i := range events {
		events[i] = int64(i) * 20_000
	}
	for i := range perUpload {
		r := record.Result{ID: uint64(i), SendUS: int64(i) * 1000, TTFTUS: 80_000, E2EUS: 2_600_000, EventsUS: events,
			Stream: true, InputTokens: 512, OutputTokens: 128, TokenSource: record.TokensUsage, Status: 200}
		chunk.Write(record.AppendResultJSON(nil, &r))
		chunk.WriteByte('\n')
	}
	body := chunk.Bytes()
	seg := schedule.Segment{Index: 0, Count: 1}
	client := srv.Client()
	b.SetBytes(int64(len(body)) / perUpload)
	b.ReportAllocs()
	b.ResetTimer()
	var offset int64
	for done := 0; done < b.N; done += perUpload {
		url := segmentURL(srv.URL, seg, "files/records.jsonl") + fmt.Sprintf("?offset=%d", offset)
		req, _ := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("upload: %s", resp.Status)
		}
		offset += int64(len(body))
	}
}
