package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/inferload/inferload/record"
)

// RecordsCSVHeader names the columns of records.csv, one per Result field
// a spreadsheet can use. Times stay in integer microseconds, as in
// records.jsonl, so nothing is rounded; events_us (a list) is reduced to
// its length, output_events.
var RecordsCSVHeader = []string{
	"id", "step", "class", "expect", "warmup", "open_loop",
	"intended_us", "send_us", "queue_delay_us", "late",
	"ttft_us", "e2e_us", "output_events",
	"stream", "input_tokens", "output_tokens", "reasoning_tokens", "token_source",
	"prompt_tokens_sent", "max_tokens", "finish_reason",
	"status", "error", "error_msg", "bytes_out", "bytes_in",
	"proto", "new_conn", "images", "image_size",
	// Reasoning models' per-channel times (0 for a reply that did not
	// reason), last so the earlier columns keep their places.
	"ttfr_us", "ttfo_us", "reasoning_events", "channels_interleaved",
	// Prefix reuse (asked, served) and grading, after them.
	"cached_tokens", "reuse_tokens", "graded", "correct", "unparsable",
	"replica",
	// A conversation's turn (1-based) and session; 0 for single requests.
	"turn", "session",
	// Whether the turn's reply was too long to thread into the next turn
	// (record.Result.ReplyCut), and how many calls its session holds when
	// sessions differ in length (a replayed agent trace; 0 otherwise).
	"reply_cut", "session_calls",
	// The rest of the record's flat fields, after every earlier column:
	// the join keys to the server's logs and the Responses API, retries
	// (attempts is how many earlier attempts the record lists), the
	// request's ignore_eos, the kernel clock and the client's read lag,
	// the server's usage counts a record refused, and the server's own
	// timings (record.ServerTime, prefixed server_; 0 when it sent none).
	"trace_id", "response_id", "retry_stop", "attempts", "ignore_eos",
	"clock", "read_lag_us", "usage_implausible", "usage_input_tokens", "usage_output_tokens",
	"server_prefill_us", "server_prompt_n", "server_decode_us", "server_decode_n",
	"server_queue_us", "server_has_queue", "server_inference_us",
}

// SeriesCSVHeader names the columns of series.csv: the fields of
// record.Window in series.jsonl order.
var SeriesCSVHeader = []string{
	"t_s", "completed", "succeeded", "failed", "expected_rejections", "warmup",
	"output_tokens", "input_tokens", "ttft_p50_ms", "ttft_p99_ms", "e2e_p99_ms",
	// The read lag of the window's kernel-stamped successes (0 without
	// one), last so the earlier columns keep their places.
	"read_lag_p50_ms", "read_lag_p99_ms",
}

// RecordsCSV writes records as CSV rows under RecordsCSVHeader. Call Flush
// when done; the header is written with the first row (or by Flush when
// there was none), so an empty run still gives a valid file.
type RecordsCSV struct {
	w      *csv.Writer
	row    []string
	header bool
}

// NewRecordsCSV returns a writer of records.csv rows to w.
func NewRecordsCSV(w io.Writer) *RecordsCSV {
	return &RecordsCSV{w: csv.NewWriter(w), row: make([]string, len(RecordsCSVHeader))}
}

// Write appends one record's row.
func (c *RecordsCSV) Write(r *record.Result) error {
	if err := c.writeHeader(); err != nil {
		return err
	}
	i64, b := strconv.FormatInt, strconv.FormatBool
	itoa := strconv.Itoa
	c.row = append(c.row[:0],
		strconv.FormatUint(r.ID, 10), itoa(r.Step), r.Class, r.Expect, b(r.Warmup), b(r.OpenLoop),
		i64(r.IntendedUS, 10), i64(r.SendUS, 10), i64(r.QueueDelayUS, 10), b(r.Late),
		i64(r.TTFTUS, 10), i64(r.E2EUS, 10), itoa(len(r.EventsUS)),
		b(r.Stream), itoa(r.InputTokens), itoa(r.OutputTokens), itoa(r.ReasoningTokens), string(r.TokenSource),
		itoa(r.PromptTokensSent), itoa(r.MaxTokens), cellText(r.FinishReason),
		itoa(r.Status), string(r.Error), cellText(r.ErrorMsg), i64(r.BytesOut, 10), i64(r.BytesIn, 10),
		r.Proto, b(r.NewConn), itoa(r.Images), r.ImageSize,
		i64(r.TTFRUS, 10), i64(r.TTFOUS, 10), itoa(r.ReasoningEvents), b(r.ChannelsInterleaved),
		itoa(r.CachedTokens), itoa(r.ReuseTokens), b(r.Graded), b(r.Correct), b(r.Unparsable),
		itoa(r.Replica),
		itoa(r.Turn), strconv.FormatUint(r.Session, 10),
		b(r.ReplyCut), itoa(r.SessionCalls),
		r.TraceID, cellText(r.ResponseID), r.RetryStop, itoa(len(r.Attempts)), b(r.IgnoreEOS),
		r.Clock, i64(r.ReadLagUS, 10), b(r.UsageImplausible), itoa(r.UsageInputTokens), itoa(r.UsageOutputTokens),
	)
	c.row = appendServerTime(c.row, r.Server)
	if err := c.w.Write(c.row); err != nil {
		return fmt.Errorf("writing CSV row of record %d: %w", r.ID, err)
	}
	return nil
}

// appendServerTime appends the server_* cells of records.csv: the
// server's own timings, zeros when it sent none (server_has_queue tells a
// queue of 0 µs from one not reported).
func appendServerTime(row []string, s *record.ServerTime) []string {
	if s == nil {
		s = &record.ServerTime{}
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	return append(row, i64(s.PrefillUS), strconv.Itoa(s.PromptN), i64(s.DecodeUS), strconv.Itoa(s.DecodeN),
		i64(s.QueueUS), strconv.FormatBool(s.HasQueue), i64(s.InferenceUS))
}

// Flush writes any buffered rows (and the header of an empty file).
func (c *RecordsCSV) Flush() error {
	if err := c.writeHeader(); err != nil {
		return err
	}
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("writing records CSV: %w", err)
	}
	return nil
}

func (c *RecordsCSV) writeHeader() error {
	if c.header {
		return nil
	}
	c.header = true
	if err := c.w.Write(RecordsCSVHeader); err != nil {
		return fmt.Errorf("writing records CSV header: %w", err)
	}
	return nil
}

// SeriesCSV writes per-second windows as CSV rows under SeriesCSVHeader,
// with the same header and Flush rules as RecordsCSV.
type SeriesCSV struct {
	w      *csv.Writer
	row    []string
	header bool
}

// NewSeriesCSV returns a writer of series.csv rows to w.
func NewSeriesCSV(w io.Writer) *SeriesCSV {
	return &SeriesCSV{w: csv.NewWriter(w), row: make([]string, len(SeriesCSVHeader))}
}

// Write appends one window's row.
func (c *SeriesCSV) Write(w *record.Window) error {
	if err := c.writeHeader(); err != nil {
		return err
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	c.row = append(c.row[:0],
		i64(w.TS), i64(w.Completed), i64(w.Succeeded), i64(w.Failed), i64(w.ExpectedRejections), i64(w.Warmup),
		i64(w.OutputTokens), i64(w.InputTokens), msText(w.TTFTP50MS), msText(w.TTFTP99MS), msText(w.E2EP99MS),
		msText(w.ReadLagP50MS), msText(w.ReadLagP99MS),
	)
	if err := c.w.Write(c.row); err != nil {
		return fmt.Errorf("writing CSV row of second %d: %w", w.TS, err)
	}
	return nil
}

// Flush writes any buffered rows (and the header of an empty file).
func (c *SeriesCSV) Flush() error {
	if err := c.writeHeader(); err != nil {
		return err
	}
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("writing series CSV: %w", err)
	}
	return nil
}

func (c *SeriesCSV) writeHeader() error {
	if c.header {
		return nil
	}
	c.header = true
	if err := c.w.Write(SeriesCSVHeader); err != nil {
		return fmt.Errorf("writing series CSV header: %w", err)
	}
	return nil
}

// msText formats milliseconds with the shortest exact representation, so
// the CSV holds the same value series.jsonl does.
func msText(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// cellText defuses text that came from the target before it reaches a
// spreadsheet: a cell starting with = + - @ or a tab/CR is run as a formula
// by Excel and LibreOffice (CSV injection), so such a cell gets a leading
// apostrophe, which those programs hide. encoding/csv already quotes
// commas, quotes and newlines.
func cellText(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}
