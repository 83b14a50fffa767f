package schedule

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The engine's open-loop interface is Next() time.Duration; a Trace must
// fit it as Arrivals does.
var _ interface{ Next() time.Duration } = (*Trace)(nil)

func TestLoadTraceFormats(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		file   string
		opts   TraceOptions
		format string
		want   []TraceEntry
	}{
		// Azure 2023: seven fractional digits, offsets from the first
		// request; a 0 output is kept as recorded.
		{"azure_2023.csv", TraceOptions{}, TraceAzure, []TraceEntry{
			{At: 0, InputTokens: 374, OutputTokens: 44, Line: 2},
			{At: 4314579 * time.Microsecond, InputTokens: 396, OutputTokens: 109, Line: 3},
			{At: 4319410 * time.Microsecond, InputTokens: 879, OutputTokens: 25, Line: 4},
			{At: 10 * time.Second, InputTokens: 91, OutputTokens: 0, Line: 5},
		}},
		// Azure 2024: a time zone suffix.
		{"azure_2024.csv", TraceOptions{}, TraceAzure, []TraceEntry{
			{At: 0, InputTokens: 2162, OutputTokens: 5, Line: 2},
			{At: 500 * ms, InputTokens: 1048, OutputTokens: 17, Line: 3},
		}},
		// BurstGPT: seconds from its start, a model column, counts written
		// as whole floats, equal timestamps keep file order.
		{"burstgpt.csv", TraceOptions{}, TraceBurstGPT, []TraceEntry{
			{At: 0, InputTokens: 472, OutputTokens: 18, Model: "ChatGPT", Line: 2},
			{At: 40 * time.Second, InputTokens: 1087, OutputTokens: 0, Model: "ChatGPT", Line: 3},
			{At: 40 * time.Second, InputTokens: 417, OutputTokens: 334, Model: "GPT-4", Line: 4},
			{At: 113500 * ms, InputTokens: 201, OutputTokens: 59, Model: "ChatGPT", Line: 5},
		}},
		// Our CSV, out of order in the file: sorted by time.
		{"trace.csv", TraceOptions{}, TraceCSV, []TraceEntry{
			{At: 0, InputTokens: 200, OutputTokens: 20, Line: 3},
			{At: 500 * ms, InputTokens: 300, OutputTokens: 30, Line: 4},
			{At: 1000 * ms, InputTokens: 100, OutputTokens: 10, Line: 2},
		}},
		// Speed 2 halves every offset.
		{"trace.csv", TraceOptions{Speed: 2}, TraceCSV, []TraceEntry{
			{At: 0, InputTokens: 200, OutputTokens: 20, Line: 3},
			{At: 250 * ms, InputTokens: 300, OutputTokens: 30, Line: 4},
			{At: 500 * ms, InputTokens: 100, OutputTokens: 10, Line: 2},
		}},
		// JSONL: seconds or a date string; a blank line is skipped.
		{"trace.jsonl", TraceOptions{}, TraceJSONL, []TraceEntry{
			{At: 0, InputTokens: 128, OutputTokens: 64, Line: 1},
			{At: 2500 * ms, InputTokens: 512, OutputTokens: 0, Model: "m", Line: 3},
		}},
		// Mooncake: milliseconds, sorted by time (line 3 before line 2),
		// each entry with its block ids.
		{"mooncake.jsonl", TraceOptions{}, TraceMooncake, []TraceEntry{
			{At: 0, InputTokens: 1200, OutputTokens: 10, HashIDs: []int64{0, 1, 2}, Line: 1},
			{At: 1500 * ms, InputTokens: 1024, OutputTokens: 30, HashIDs: []int64{0, 1}, Line: 3},
			{At: 3000 * ms, InputTokens: 700, OutputTokens: 20, HashIDs: []int64{0, 3}, Line: 2},
			{At: 3000*ms + 500*time.Microsecond, InputTokens: 900, OutputTokens: 5, HashIDs: []int64{5, 1}, Line: 5},
		}},
		// A gap cap cuts the 1.5 s gaps to 1 s each and keeps the 0.5 ms one.
		{"mooncake.jsonl", TraceOptions{MaxGap: time.Second}, TraceMooncake, []TraceEntry{
			{At: 0, InputTokens: 1200, OutputTokens: 10, HashIDs: []int64{0, 1, 2}, Line: 1},
			{At: 1000 * ms, InputTokens: 1024, OutputTokens: 30, HashIDs: []int64{0, 1}, Line: 3},
			{At: 2000 * ms, InputTokens: 700, OutputTokens: 20, HashIDs: []int64{0, 3}, Line: 2},
			{At: 2000*ms + 500*time.Microsecond, InputTokens: 900, OutputTokens: 5, HashIDs: []int64{5, 1}, Line: 5},
		}},
		// The cap applies after the speed: at 2× our CSV's 0.5 s gaps are
		// 0.25 s, so a 0.3 s cap changes nothing and a 0.2 s one both.
		{"trace.csv", TraceOptions{Speed: 2, MaxGap: 300 * ms}, TraceCSV, []TraceEntry{
			{At: 0, InputTokens: 200, OutputTokens: 20, Line: 3},
			{At: 250 * ms, InputTokens: 300, OutputTokens: 30, Line: 4},
			{At: 500 * ms, InputTokens: 100, OutputTokens: 10, Line: 2},
		}},
		{"trace.csv", TraceOptions{Speed: 2, MaxGap: 200 * ms}, TraceCSV, []TraceEntry{
			{At: 0, InputTokens: 200, OutputTokens: 20, Line: 3},
			{At: 200 * ms, InputTokens: 300, OutputTokens: 30, Line: 4},
			{At: 400 * ms, InputTokens: 100, OutputTokens: 10, Line: 2},
		}},
		// An explicit format is used as given.
		{"trace.csv", TraceOptions{Format: TraceCSV, Speed: 0.5}, TraceCSV, []TraceEntry{
			{At: 0, InputTokens: 200, OutputTokens: 20, Line: 3},
			{At: 1000 * ms, InputTokens: 300, OutputTokens: 30, Line: 4},
			{At: 2000 * ms, InputTokens: 100, OutputTokens: 10, Line: 2},
		}},
	}
	for _, tt := range tests {
		tr, err := LoadTrace(filepath.Join("testdata/trace", tt.file), tt.opts)
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if tr.format != tt.format {
			t.Errorf("%s: format %q, want %q", tt.file, tr.format, tt.format)
		}
		got := traceEntries(tr)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %+v:\n got %+v\nwant %+v", tt.file, tt.opts, got, tt.want)
		}
	}
}

func TestTraceNext(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		opts TraceOptions
		want []time.Duration
	}{
		// Once through, then TraceEnd for ever.
		{TraceOptions{}, []time.Duration{0, 500 * ms, 1000 * ms, TraceEnd, TraceEnd}},
		// Looping: span 1 s plus the mean gap 0.5 s = a pass every 1.5 s,
		// so the next pass starts 0.5 s after the last request.
		{TraceOptions{Loop: true}, []time.Duration{0, 500 * ms, 1000 * ms, 1500 * ms, 2000 * ms, 2500 * ms, 3000 * ms}},
		// Looping at 4×: everything a quarter as far apart.
		{TraceOptions{Loop: true, Speed: 4}, []time.Duration{0, 125 * ms, 250 * ms, 375 * ms, 500 * ms}},
	}
	for _, tt := range tests {
		tr, err := LoadTrace("testdata/trace/trace.csv", tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]time.Duration, len(tt.want))
		for i := range got {
			got[i] = tr.Next()
			if i < tr.Len() || tt.opts.Loop {
				if r := tr.Request(uint64(i)); r.At != got[i] {
					t.Errorf("%+v: Request(%d).At = %v, Next gave %v", tt.opts, i, r.At, got[i])
				}
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%+v: Next() = %v, want %v", tt.opts, got, tt.want)
		}
	}
}

func TestTraceRequestLengthsFollowLoop(t *testing.T) {
	t.Parallel()
	tr, err := LoadTrace("testdata/trace/trace.csv", TraceOptions{Loop: true})
	if err != nil {
		t.Fatal(err)
	}
	// Request 4 is the second request of the second pass.
	if r := tr.Request(4); r.InputTokens != 300 || r.OutputTokens != 30 || r.At != 2*time.Second {
		t.Errorf("Request(4) = %+v", r)
	}
	if d := tr.Duration(); d != 1500*time.Millisecond {
		t.Errorf("Duration() = %v, want 1.5s", d)
	}
}

func TestTraceString(t *testing.T) {
	t.Parallel()
	tr, err := LoadTrace("testdata/trace/burstgpt.csv", TraceOptions{Speed: 2, Loop: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "trace testdata/trace/burstgpt.csv (burstgpt): 4 requests over 1m53.5s (0.03/s), replayed at 2× in 56.75s, looping every 1m15.667s"
	if got := tr.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
}

func TestLoadTraceErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		opts       TraceOptions
		want       []string // substrings of the error
	}{
		// A bad Azure timestamp names line and column.
		{"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1,2\nyesterday,3,4\n", TraceOptions{},
			[]string{"a.csv", "azure", "line 3", "column TIMESTAMP", "yesterday"}},
		// A negative token count.
		{"b.csv", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1,ChatGPT,-5,1,1,x\n", TraceOptions{},
			[]string{"burstgpt", "line 2", "column Request tokens", "-5"}},
		// A fractional token count.
		{"c.csv", "timestamp,input_tokens,output_tokens\n0,1.5,2\n", TraceOptions{}, []string{"line 2", "column input_tokens", "1.5"}},
		// A header missing a column of the chosen layout.
		{"d.csv", "timestamp,input_tokens\n0,1\n", TraceOptions{}, []string{"line 1", `no "output_tokens" column`}},
		// The wrong number of cells (csv.ParseError has the line).
		{"e.csv", "timestamp,input_tokens,output_tokens\n0,1,2\n1,2\n", TraceOptions{}, []string{"line 3"}},
		// A JSONL line without input_tokens.
		{"f.jsonl", "{\"timestamp\": 1, \"input_tokens\": 1, \"output_tokens\": 1}\n{\"timestamp\": 2, \"output_tokens\": 1}\n", TraceOptions{},
			[]string{"f.jsonl", "line 2", "field input_tokens"}},
		// A JSONL timestamp of the wrong kind.
		{"g.jsonl", "{\"timestamp\": true, \"input_tokens\": 1, \"output_tokens\": 1}\n", TraceOptions{}, []string{"line 1", "field timestamp"}},
		// Broken JSON.
		{"h.jsonl", "{\"timestamp\": 1,\n", TraceOptions{}, []string{"line 1"}},
		// A header and no requests.
		{"i.csv", "timestamp,input_tokens,output_tokens\n", TraceOptions{}, []string{"i.csv", "no requests"}},
		// Looping a trace whose requests share one instant would issue them
		// all at once for ever.
		{"j.csv", "timestamp,input_tokens,output_tokens\n3,1,1\n3,2,2\n", TraceOptions{Loop: true}, []string{"loop", "span some time"}},
		// A negative speed.
		{"k.csv", "timestamp,input_tokens,output_tokens\n0,1,1\n", TraceOptions{Speed: -2}, []string{"speed -2"}},
		// Mooncake lines missing a field, each naming line and field.
		{"mc1.jsonl", `{"input_length": 1, "output_length": 1, "hash_ids": []}`, TraceOptions{}, []string{"mooncake", "line 1", "field timestamp: missing"}},
		{"mc2.jsonl", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0]}\n\n{\"timestamp\": 1, \"output_length\": 1, \"hash_ids\": []}",
			TraceOptions{}, []string{"line 3", "field input_length"}},
		{"mc3.jsonl", `{"timestamp": 0, "input_length": 1, "hash_ids": []}`, TraceOptions{}, []string{"line 1", "field output_length"}},
		{"mc4.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 1}`, TraceOptions{Format: TraceMooncake}, []string{"line 1", "field hash_ids: missing"}},
		// Negative lengths and timestamps.
		{"mc5.jsonl", `{"timestamp": 0, "input_length": -3, "output_length": 1, "hash_ids": []}`, TraceOptions{}, []string{"line 1", "field input_length", "negative"}},
		{"mc6.jsonl", `{"timestamp": 0, "input_length": 3, "output_length": -1, "hash_ids": []}`, TraceOptions{}, []string{"field output_length"}},
		{"mc7.jsonl", `{"timestamp": -5, "input_length": 3, "output_length": 1, "hash_ids": []}`, TraceOptions{}, []string{"field timestamp", "-5"}},
		// More blocks than the prompt has: 513 tokens fill 2 blocks of
		// 512, and 3 of 256.
		{"mc8.jsonl", `{"timestamp": 0, "input_length": 513, "output_length": 1, "hash_ids": [1, 2, 3]}`, TraceOptions{},
			[]string{"line 1", "field hash_ids", "3 blocks", "input_length 513 fills at most 2 of 512 tokens"}},
		{"mc9.jsonl", `{"timestamp": 0, "input_length": 513, "output_length": 1, "hash_ids": [1, 2, 3, 4]}`, TraceOptions{BlockTokens: 256},
			[]string{"4 blocks", "at most 3 of 256"}},
		// A hash id that is not an integer.
		{"mc10.jsonl", `{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [1.5]}`, TraceOptions{}, []string{"line 1", "field hash_ids"}},
		// A block size out of range.
		{"mc11.jsonl", `{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": []}`, TraceOptions{BlockTokens: -1}, []string{"block tokens -1"}},
		// A negative gap cap.
		{"mc12.jsonl", `{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": []}`, TraceOptions{MaxGap: -time.Second}, []string{"max gap"}},
		// An unknown format lists the known ones.
		{"l.csv", "x\n", TraceOptions{Format: "parquet"}, []string{`"parquet"`, "burstgpt"}},
		// Seconds too large for the clock.
		{"m.csv", "timestamp,input_tokens,output_tokens\n1e300,1,1\n", TraceOptions{}, []string{"out of range"}},
		// A date beyond the clock's range.
		{"n.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n9999-01-01 00:00:00,1,1\n", TraceOptions{}, []string{"line 2", "year 9999"}},
		// A span that slowed down overflows the clock.
		{"o.csv", "timestamp,input_tokens,output_tokens\n0,1,1\n3000000000,1,1\n", TraceOptions{Speed: 0.001}, []string{"too long"}},
	}
	for _, tt := range tests {
		wantTraceError(t, writeTrace(t, tt.name, tt.body), tt.opts, tt.want)
	}
	if _, err := LoadTrace(filepath.Join(t.TempDir(), "none.csv"), TraceOptions{}); err == nil || !strings.Contains(err.Error(), "none.csv") {
		t.Errorf("missing file: error %v does not name it", err)
	}
}

// FuzzTrace feeds arbitrary bytes to every trace parser: none may panic,
// and a parsed trace must replay in order from 0.
func FuzzTrace(f *testing.F) {
	for _, name := range []string{"azure_2023.csv", "azure_2024.csv", "burstgpt.csv", "trace.csv", "trace.jsonl", "mooncake.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata/trace", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range TraceFormats() {
			rows, err := parseTrace(format, data, 64)
			if err != nil || len(rows) == 0 {
				continue
			}
			entries, err := scaleTrace(rows, 0.001, time.Hour)
			if err != nil {
				continue
			}
			if entries[0].At != 0 {
				t.Fatalf("%s: first offset %v", format, entries[0].At)
			}
			for i := 1; i < len(entries); i++ {
				if entries[i].At < entries[i-1].At {
					t.Fatalf("%s: offsets go back at %d: %v", format, i, entries)
				}
				if entries[i].InputTokens < 0 || entries[i].OutputTokens < 0 {
					t.Fatalf("%s: negative lengths %+v", format, entries[i])
				}
				if entries[i].At-entries[i-1].At > time.Hour {
					t.Fatalf("%s: gap above the cap at %d: %v", format, i, entries)
				}
			}
			for _, e := range entries {
				if len(e.HashIDs) > (e.InputTokens+63)/64 {
					t.Fatalf("%s: blocks %+v", format, e)
				}
			}
		}
	})
}

// traceEntries lists tr's entries in order.
func traceEntries(tr *Trace) []TraceEntry {
	got := make([]TraceEntry, tr.Len())
	for i := range got {
		got[i] = tr.Entry(i)
	}
	return got
}

// writeTrace writes body to a file called name in a temporary directory
// and returns its path.
func writeTrace(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantTraceError checks that loading the trace at path with opts fails
// with an error holding each of want.
func wantTraceError(t *testing.T, path string, opts TraceOptions, want []string) {
	t.Helper()
	_, err := LoadTrace(path, opts)
	if err == nil {
		t.Errorf("%s: no error", filepath.Base(path))
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q lacks %q", filepath.Base(path), err, w)
		}
	}
}
