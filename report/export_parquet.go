package report

import (
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/inferload/inferload/record"
)

// The Parquet exports hold every field of a record (RecordRow) and of a
// series window (WindowRow) under the names records.jsonl and series.jsonl
// use, so a notebook reads the same columns the JSON files have. The row
// types carry json tags equal to their parquet names:
// TestParquetRowsMirrorJSON encodes a record with every field set both
// ways and fails when a field of record.Result (or Window) is missing here
// or copied into the wrong column.

// parquetRowGroup bounds the rows a writer buffers before it writes a row
// group: a multi-million-record run is exported in constant memory.
const parquetRowGroup = 64 << 10

// RecordRow is one request as a Parquet row: record.Result, with the token
// offsets as a list column.
type RecordRow struct {
	ID                uint64         `parquet:"id" json:"id"`
	Step              int            `parquet:"step" json:"step,omitempty"`
	Class             string         `parquet:"class,dict" json:"class,omitempty"`
	Turn              int            `parquet:"turn" json:"turn,omitempty"`
	Session           uint64         `parquet:"session" json:"session,omitempty"`
	SessionCalls      int            `parquet:"session_calls" json:"session_calls,omitempty"`
	ReplyCut          bool           `parquet:"reply_cut" json:"reply_cut,omitempty"`
	Expect            string         `parquet:"expect,dict" json:"expect,omitempty"`
	Graded            bool           `parquet:"graded" json:"graded,omitempty"`
	Correct           bool           `parquet:"correct" json:"correct,omitempty"`
	Unparsable        bool           `parquet:"unparsable" json:"unparsable,omitempty"`
	Warmup            bool           `parquet:"warmup" json:"warmup,omitempty"`
	OpenLoop          bool           `parquet:"open_loop" json:"open_loop,omitempty"`
	IntendedUS        int64          `parquet:"intended_us" json:"intended_us,omitempty"`
	SendUS            int64          `parquet:"send_us" json:"send_us"`
	QueueDelayUS      int64          `parquet:"queue_delay_us" json:"queue_delay_us,omitempty"`
	Late              bool           `parquet:"late" json:"late,omitempty"`
	TTFTUS            int64          `parquet:"ttft_us" json:"ttft_us,omitempty"`
	Clock             string         `parquet:"clock,dict" json:"clock,omitempty"`
	ReadLagUS         int64          `parquet:"read_lag_us" json:"read_lag_us,omitempty"`
	TTFRUS            int64          `parquet:"ttfr_us" json:"ttfr_us,omitempty"`
	TTFOUS            int64          `parquet:"ttfo_us" json:"ttfo_us,omitempty"`
	E2EUS             int64          `parquet:"e2e_us" json:"e2e_us"`
	EventsUS          []int64        `parquet:"events_us,list" json:"events_us,omitempty"`
	EventsTail        *EventsTailRow `parquet:"events_tail,optional" json:"events_tail,omitempty"`
	Stream            bool           `parquet:"stream" json:"stream"`
	InputTokens       int            `parquet:"input_tokens" json:"input_tokens"`
	OutputTokens      int            `parquet:"output_tokens" json:"output_tokens"`
	ReasoningTokens   int            `parquet:"reasoning_tokens" json:"reasoning_tokens,omitempty"`
	ReasoningEvents   int            `parquet:"reasoning_events" json:"reasoning_events,omitempty"`
	Interleaved       bool           `parquet:"channels_interleaved" json:"channels_interleaved,omitempty"`
	TokenSource       string         `parquet:"token_source,dict" json:"token_source,omitempty"`
	UsageImplausible  bool           `parquet:"usage_implausible" json:"usage_implausible,omitempty"`
	UsageOutputTokens int            `parquet:"usage_output_tokens" json:"usage_output_tokens,omitempty"`
	UsageInputTokens  int            `parquet:"usage_input_tokens" json:"usage_input_tokens,omitempty"`
	PromptTokensSent  int            `parquet:"prompt_tokens_sent" json:"prompt_tokens_sent,omitempty"`
	MaxTokens         int            `parquet:"max_tokens" json:"max_tokens,omitempty"`
	IgnoreEOS         bool           `parquet:"ignore_eos" json:"ignore_eos,omitempty"`
	FinishReason      string         `parquet:"finish_reason,dict" json:"finish_reason,omitempty"`
	ResponseID        string         `parquet:"response_id" json:"response_id,omitempty"`
	Status            int            `parquet:"status" json:"status,omitempty"`
	Error             string         `parquet:"error,dict" json:"error,omitempty"`
	ErrorMsg          string         `parquet:"error_msg" json:"error_msg,omitempty"`
	BytesOut          int64          `parquet:"bytes_out" json:"bytes_out,omitempty"`
	BytesIn           int64          `parquet:"bytes_in" json:"bytes_in,omitempty"`
	Proto             string         `parquet:"proto,dict" json:"proto,omitempty"`
	NewConn           bool           `parquet:"new_conn" json:"new_conn,omitempty"`
	Replica           int            `parquet:"replica" json:"replica,omitempty"`
	Images            int            `parquet:"images" json:"images,omitempty"`
	ImageSize         string         `parquet:"image_size,dict" json:"image_size,omitempty"`
	Attempts          []AttemptRow   `parquet:"attempts,list" json:"attempts,omitempty"`
	RetryStop         string         `parquet:"retry_stop,dict" json:"retry_stop,omitempty"`
	TraceID           string         `parquet:"trace_id" json:"trace_id,omitempty"`
	CachedTokens      int            `parquet:"cached_tokens" json:"cached_tokens,omitempty"`
	ReuseTokens       int            `parquet:"reuse_tokens" json:"reuse_tokens,omitempty"`
	Server            *ServerTimeRow `parquet:"server,optional" json:"server,omitempty"`
	Chain             []ChainStepRow `parquet:"chain,list" json:"chain,omitempty"`
}

// EventsTailRow is record.EventsTail; each gap is a [gap µs, count] pair,
// as in records.jsonl.
type EventsTailRow struct {
	Dropped int       `parquet:"dropped" json:"dropped"`
	LastUS  int64     `parquet:"last_us" json:"last_us"`
	Gaps    [][]int64 `parquet:"gaps,list" json:"gaps"`
}

// AttemptRow is record.Attempt: an earlier attempt of a retried request.
type AttemptRow struct {
	SendUS       int64  `parquet:"send_us" json:"send_us"`
	EndUS        int64  `parquet:"end_us" json:"end_us"`
	Status       int    `parquet:"status" json:"status,omitempty"`
	Error        string `parquet:"error,dict" json:"error"`
	RetryAfterUS int64  `parquet:"retry_after_us" json:"retry_after_us,omitempty"`
	WaitUS       int64  `parquet:"wait_us" json:"wait_us"`
}

// ServerTimeRow is record.ServerTime: the server's own account of the
// request's time.
type ServerTimeRow struct {
	PrefillUS   int64 `parquet:"prefill_us" json:"prefill_us"`
	PromptN     int   `parquet:"prompt_n" json:"prompt_n,omitempty"`
	DecodeUS    int64 `parquet:"decode_us" json:"decode_us"`
	DecodeN     int   `parquet:"decode_n" json:"decode_n,omitempty"`
	QueueUS     int64 `parquet:"queue_us" json:"queue_us,omitempty"`
	HasQueue    bool  `parquet:"has_queue" json:"has_queue,omitempty"`
	InferenceUS int64 `parquet:"inference_us" json:"inference_us,omitempty"`
}

// ChainStepRow is record.ChainStep: one call of a multi-step chain.
type ChainStepRow struct {
	Name         string `parquet:"name,dict" json:"name"`
	Kind         string `parquet:"kind,dict" json:"kind"`
	SendUS       int64  `parquet:"send_us" json:"send_us"`
	TTFTUS       int64  `parquet:"ttft_us" json:"ttft_us,omitempty"`
	DurUS        int64  `parquet:"dur_us" json:"dur_us"`
	Status       int    `parquet:"status" json:"status,omitempty"`
	Error        string `parquet:"error,dict" json:"error,omitempty"`
	InputTokens  int    `parquet:"input_tokens" json:"input_tokens,omitempty"`
	OutputTokens int    `parquet:"output_tokens" json:"output_tokens,omitempty"`
	BytesIn      int64  `parquet:"bytes_in" json:"bytes_in,omitempty"`
	Skipped      bool   `parquet:"skipped" json:"skipped,omitempty"`
	ReplyCut     bool   `parquet:"reply_cut" json:"reply_cut,omitempty"`
}

// WindowRow is one second of series.jsonl (record.Window).
type WindowRow struct {
	TS                 int64   `parquet:"t_s" json:"t_s"`
	Completed          int64   `parquet:"completed" json:"completed"`
	Succeeded          int64   `parquet:"succeeded" json:"succeeded"`
	Failed             int64   `parquet:"failed" json:"failed"`
	ExpectedRejections int64   `parquet:"expected_rejections" json:"expected_rejections,omitempty"`
	Warmup             int64   `parquet:"warmup" json:"warmup"`
	OutputTokens       int64   `parquet:"output_tokens" json:"output_tokens"`
	InputTokens        int64   `parquet:"input_tokens" json:"input_tokens"`
	TTFTP50MS          float64 `parquet:"ttft_p50_ms" json:"ttft_p50_ms"`
	TTFTP99MS          float64 `parquet:"ttft_p99_ms" json:"ttft_p99_ms"`
	E2EP99MS           float64 `parquet:"e2e_p99_ms" json:"e2e_p99_ms"`
	ReadLagP50MS       float64 `parquet:"read_lag_p50_ms" json:"read_lag_p50_ms,omitempty"`
	ReadLagP99MS       float64 `parquet:"read_lag_p99_ms" json:"read_lag_p99_ms,omitempty"`
}

// RecordRowOf copies r into its Parquet row.
func RecordRowOf(r *record.Result) RecordRow {
	row := RecordRow{
		ID: r.ID, Step: r.Step, Class: r.Class, Turn: r.Turn, Session: r.Session, SessionCalls: r.SessionCalls, ReplyCut: r.ReplyCut, Expect: r.Expect,
		Graded: r.Graded, Correct: r.Correct, Unparsable: r.Unparsable, ResponseID: r.ResponseID,
		Warmup: r.Warmup, OpenLoop: r.OpenLoop, IntendedUS: r.IntendedUS,
		SendUS: r.SendUS, QueueDelayUS: r.QueueDelayUS, Late: r.Late,
		TTFTUS: r.TTFTUS, E2EUS: r.E2EUS, Clock: r.Clock, ReadLagUS: r.ReadLagUS, EventsUS: r.EventsUS,
		Stream: r.Stream, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		ReasoningTokens: r.ReasoningTokens, TokenSource: string(r.TokenSource),
		TTFRUS: r.TTFRUS, TTFOUS: r.TTFOUS, ReasoningEvents: r.ReasoningEvents, Interleaved: r.ChannelsInterleaved,
		UsageImplausible: r.UsageImplausible, UsageOutputTokens: r.UsageOutputTokens, UsageInputTokens: r.UsageInputTokens,
		PromptTokensSent: r.PromptTokensSent, MaxTokens: r.MaxTokens, IgnoreEOS: r.IgnoreEOS,
		FinishReason: r.FinishReason, Status: r.Status, Error: string(r.Error), ErrorMsg: r.ErrorMsg,
		BytesOut: r.BytesOut, BytesIn: r.BytesIn, Proto: r.Proto, NewConn: r.NewConn, Replica: r.Replica,
		Images: r.Images, ImageSize: r.ImageSize, RetryStop: r.RetryStop,
		TraceID: r.TraceID, CachedTokens: r.CachedTokens, ReuseTokens: r.ReuseTokens,
	}
	if t := r.EventsTail; t != nil {
		gaps := make([][]int64, len(t.Gaps))
		for i, g := range t.Gaps {
			gaps[i] = []int64{g[0], g[1]}
		}
		row.EventsTail = &EventsTailRow{Dropped: t.Dropped, LastUS: t.LastUS, Gaps: gaps}
	}
	for _, a := range r.Attempts {
		row.Attempts = append(row.Attempts, AttemptRow{
			SendUS: a.SendUS, EndUS: a.EndUS, Status: a.Status, Error: string(a.Error),
			RetryAfterUS: a.RetryAfterUS, WaitUS: a.WaitUS,
		})
	}
	if s := r.Server; s != nil {
		row.Server = &ServerTimeRow{
			PrefillUS: s.PrefillUS, PromptN: s.PromptN, DecodeUS: s.DecodeUS,
			DecodeN: s.DecodeN, QueueUS: s.QueueUS, HasQueue: s.HasQueue, InferenceUS: s.InferenceUS,
		}
	}
	for _, c := range r.Chain {
		row.Chain = append(row.Chain, ChainStepRow{
			Name: c.Name, Kind: c.Kind, SendUS: c.SendUS, TTFTUS: c.TTFTUS, DurUS: c.DurUS,
			Status: c.Status, Error: string(c.Error), InputTokens: c.InputTokens,
			OutputTokens: c.OutputTokens, BytesIn: c.BytesIn, Skipped: c.Skipped, ReplyCut: c.ReplyCut,
		})
	}
	return row
}

// WindowRowOf copies w into its Parquet row.
func WindowRowOf(w *record.Window) WindowRow {
	return WindowRow{
		TS: w.TS, Completed: w.Completed, Succeeded: w.Succeeded, Failed: w.Failed,
		ExpectedRejections: w.ExpectedRejections, Warmup: w.Warmup,
		OutputTokens: w.OutputTokens, InputTokens: w.InputTokens,
		TTFTP50MS: w.TTFTP50MS, TTFTP99MS: w.TTFTP99MS, E2EP99MS: w.E2EP99MS,
		ReadLagP50MS: w.ReadLagP50MS, ReadLagP99MS: w.ReadLagP99MS,
	}
}

// ParquetWriter writes rows of type T (RecordRow or WindowRow) to a
// zstd-compressed Parquet file, a row group every parquetRowGroup rows.
// Close writes the footer; without it the file is unreadable.
type ParquetWriter[T any] struct {
	w    *parquet.GenericWriter[T]
	what string
	buf  []T
}

// NewParquetWriter returns a writer of what's rows ("records", "series":
// it names the file in errors) to w.
func NewParquetWriter[T any](w io.Writer, what string) *ParquetWriter[T] {
	return &ParquetWriter[T]{
		w: parquet.NewGenericWriter[T](w,
			parquet.Compression(&parquet.Zstd),
			parquet.MaxRowsPerRowGroup(parquetRowGroup),
			parquet.CreatedBy("inferload", "", "")),
		what: what,
		buf:  make([]T, 0, 1024),
	}
}

// Write appends one row; rows go to the file in batches.
func (p *ParquetWriter[T]) Write(row T) error {
	p.buf = append(p.buf, row)
	if len(p.buf) == cap(p.buf) {
		return p.flush()
	}
	return nil
}

func (p *ParquetWriter[T]) flush() error {
	if _, err := p.w.Write(p.buf); err != nil {
		return fmt.Errorf("writing %s parquet: %w", p.what, err)
	}
	clear(p.buf) // drop references to the rows' slices
	p.buf = p.buf[:0]
	return nil
}

// Close writes the buffered rows and the file's footer.
func (p *ParquetWriter[T]) Close() error {
	if err := p.flush(); err != nil {
		return err
	}
	if err := p.w.Close(); err != nil {
		return fmt.Errorf("writing %s parquet: %w", p.what, err)
	}
	return nil
}
