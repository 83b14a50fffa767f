package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/inferload/inferload/record"
)

// recordsCSVHeaderBefore is records.csv's header before the record's
// remaining flat fields were added: every one of these columns keeps its
// place, so a spreadsheet or script that reads columns by position still
// reads the same figures.
var recordsCSVHeaderBefore = []string{
	"id", "step", "class", "expect", "warmup", "open_loop",
	"intended_us", "send_us", "queue_delay_us", "late",
	"ttft_us", "e2e_us", "output_events",
	"stream", "input_tokens", "output_tokens", "reasoning_tokens", "token_source",
	"prompt_tokens_sent", "max_tokens", "finish_reason",
	"status", "error", "error_msg", "bytes_out", "bytes_in",
	"proto", "new_conn", "images", "image_size",
	"ttfr_us", "ttfo_us", "reasoning_events", "channels_interleaved",
	"cached_tokens", "reuse_tokens", "graded", "correct", "unparsable",
	"replica", "turn", "session", "reply_cut", "session_calls",
}

// TestRecordsCSVHoldsEveryFlatField: every scalar field of a record as
// records.jsonl writes it, and of its server timings (as server_NAME), is
// a records.csv column holding the same value; the lists are there as
// counts (events_us as output_events, attempts as attempts). A record
// with every field set to a value no other field has (fillDistinct) shows
// a field left out or copied into the wrong column. The columns that were
// there before keep their places.
func TestRecordsCSVHoldsEveryFlatField(t *testing.T) {
	t.Parallel()
	if !slices.Equal(RecordsCSVHeader[:len(recordsCSVHeaderBefore)], recordsCSVHeaderBefore) {
		t.Errorf("records.csv's first %d columns moved:\n%v\nwant\n%v", len(recordsCSVHeaderBefore),
			RecordsCSVHeader[:len(recordsCSVHeaderBefore)], recordsCSVHeaderBefore)
	}
	n := 0
	var full record.Result
	fillDistinct(reflect.ValueOf(&full).Elem(), &n)
	row := csvRowOf(t, &full)

	want := flatJSON(t, &full, "")
	server := flatJSON(t, full.Server, "server_")
	for k, v := range server {
		want[k] = v
	}
	want["output_events"] = fmt.Sprint(len(full.EventsUS))
	want["attempts"] = fmt.Sprint(len(full.Attempts))
	for col, v := range want {
		got, ok := row[col]
		switch {
		case !ok:
			t.Errorf("records.jsonl's %s (%s) is no records.csv column", col, v)
		case got != v:
			t.Errorf("column %s = %q, want %q", col, got, v)
		}
	}
	// A record the server sent no timings for: zeros, not blanks.
	plain := csvRowOf(t, &record.Result{ID: 9})
	for _, col := range []string{"server_prefill_us", "server_queue_us", "attempts", "read_lag_us"} {
		if plain[col] != "0" {
			t.Errorf("a record without %s has %q there, want 0", col, plain[col])
		}
	}
	if plain["server_has_queue"] != "false" {
		t.Errorf("a record without server timings has server_has_queue %q, want false", plain["server_has_queue"])
	}
}

// csvRowOf writes r as records.csv and reads its row back by column name.
func csvRowOf(t *testing.T, r *record.Result) map[string]string {
	t.Helper()
	var buf bytes.Buffer
	c := NewRecordsCSV(&buf)
	if err := c.Write(r); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != 2 || len(rows[1]) != len(rows[0]) {
		t.Fatalf("records.csv of one record: %v (%v)", rows, err)
	}
	out := make(map[string]string, len(rows[0]))
	for i, col := range rows[0] {
		out[col] = rows[1][i]
	}
	return out
}

// flatJSON is v's JSON object's scalar members as CSV would write them,
// keyed prefix+name: lists and objects are left out.
func flatJSON(t *testing.T, v any, prefix string) map[string]string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, x := range m {
		switch x := x.(type) {
		case string:
			out[prefix+k] = x
		case bool, json.Number:
			out[prefix+k] = fmt.Sprint(x)
		}
	}
	return out
}

// series.csv has a column for every field series.jsonl writes, holding
// that field's value.
func TestSeriesCSVHoldsEveryField(t *testing.T) {
	t.Parallel()
	w := record.Window{TS: 1, Completed: 2, Succeeded: 3, Failed: 4, ExpectedRejections: 5, Warmup: 6,
		OutputTokens: 7, InputTokens: 8, TTFTP50MS: 9.5, TTFTP99MS: 10.5, E2EP99MS: 11.5, ReadLagP50MS: 12.5, ReadLagP99MS: 13.5}
	raw, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	c := NewSeriesCSV(&buf)
	if err := c.Write(&w); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %v, err %v", rows, err)
	}
	for name, v := range fields {
		k := slices.Index(rows[0], name)
		if k < 0 {
			t.Errorf("series.jsonl's %s has no column in series.csv", name)
			continue
		}
		if want := fmt.Sprint(v); rows[1][k] != want {
			t.Errorf("column %s holds %q, want %q", name, rows[1][k], want)
		}
	}
}
