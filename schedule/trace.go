package schedule

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/inferload/inferload/internal/inputfile"
)

// Trace formats LoadTrace reads. docs/workload.md shows each layout.
const (
	// TraceAzure is the Azure LLM inference trace (2023 and 2024): CSV with
	// columns TIMESTAMP (a date and time), ContextTokens, GeneratedTokens.
	TraceAzure = "azure"
	// TraceBurstGPT is the BurstGPT trace: CSV with columns Timestamp
	// (seconds from the trace start), Model, Request tokens, Response
	// tokens, Total tokens, Log Type.
	TraceBurstGPT = "burstgpt"
	// TraceCSV is our own CSV layout: timestamp, input_tokens,
	// output_tokens.
	TraceCSV = "csv"
	// TraceJSONL is one {"timestamp", "input_tokens", "output_tokens"}
	// object per line.
	TraceJSONL = "jsonl"
	// TraceMooncake is Mooncake's FAST'25 trace: one {"timestamp" (ms),
	// "input_length", "output_length", "hash_ids"} object per line, the
	// ids naming the prompt's blocks so shared prefixes replay exactly.
	TraceMooncake = "mooncake"
	// TraceDynamo is NVIDIA Dynamo's agent request trace
	// (dynamo.request.trace.v1 JSONL, as AIPerf replays it): one
	// request_end record per call, in sessions, each with its lengths,
	// start and end, and its prompt's block hashes.
	TraceDynamo = "dynamo"
	// TraceWeka is Weka's agentic coding trace (kv-cache-tester, as AIPerf
	// replays it): one JSON object per conversation, its calls with their
	// times, lengths and hash ids, and subagents with calls of their own.
	TraceWeka = "weka"
)

// TraceFormats lists the formats LoadTrace accepts.
func TraceFormats() []string {
	return []string{TraceAzure, TraceBurstGPT, TraceCSV, TraceJSONL, TraceMooncake, TraceDynamo, TraceWeka}
}

// TraceEnd is what Next returns once a trace that does not loop has run
// out. It is beyond any phase duration, so an engine that stops issuing at
// its duration stops there; without a duration, cap the phase at Len()
// requests.
const TraceEnd = time.Duration(math.MaxInt64)

// TraceOptions says how to read and replay a trace. The zero value guesses
// the format and replays once at the recorded speed.
type TraceOptions struct {
	// Format is one of TraceFormats; "" picks one from the extension and
	// the CSV header.
	Format string
	// Speed divides every gap: 2 replays twice as fast (twice the request
	// rate), 0.5 at half speed. 0 means 1.
	Speed float64
	// Loop replays the trace again from its start when it runs out, one
	// mean gap after its last request.
	Loop bool
	// MaxGap caps every gap between consecutive requests, as replayed
	// (after Speed): a trace's idle hours become MaxGap each. 0 keeps
	// every gap.
	MaxGap time.Duration
	// BlockTokens is the tokens each Mooncake hash id stands for; 0 means
	// DefaultBlockTokens. A Dynamo or Weka trace records its own, which
	// this must match when set. Other formats ignore it.
	BlockTokens int
	// Context stops reading the file when done (a signal); nil means
	// never. The file is refused past inputfile.Trace's limit.
	Context context.Context
}

// TraceEntry is one recorded request.
type TraceEntry struct {
	// At is the request's offset from the trace's first request, already
	// divided by the speed.
	At time.Duration
	// InputTokens and OutputTokens are the recorded prompt and output
	// lengths. OutputTokens 0 means the trace recorded no output (BurstGPT
	// marks failed requests so).
	InputTokens, OutputTokens int
	// Model is the trace's model column (BurstGPT), or "".
	Model string
	// HashIDs name the prompt's blocks of BlockTokens tokens (Mooncake),
	// first block first; nil for other formats. Shared read-only.
	HashIDs []int64
	// Line is the entry's line in the file.
	Line int
	// Session and Turn place the entry in an agent trace's sessions: the
	// index of its session in Trace.Sessions and its 0-based place there.
	// Both 0 in formats without sessions.
	Session, Turn int
	// Delay is, in an agent trace, how long after the reply this call
	// waits for ended it was sent (recorded start minus that reply's
	// recorded end, at least 0, divided by the speed and cut to MaxGap):
	// the reply of the session's previous call, or for a subagent's first
	// call its parent's call (TraceSession.ParentCall). 0 otherwise.
	Delay time.Duration
}

// Trace is a recorded request log replayed at its own arrival times. Its
// Next makes it an open-loop schedule like Arrivals; Request gives the
// lengths recorded for each request so the workload can match them.
//
// A Trace's entries are immutable, but Next advances a cursor and is not
// safe for concurrent use: one dispatcher owns it, as with Arrivals.
type Trace struct {
	path    string
	format  string
	speed   float64
	loop    bool
	entries []TraceEntry
	// recorded is the trace's own span, before speed and gap cap.
	recorded time.Duration
	maxGap   time.Duration
	// period is how far apart two passes of a looping trace start: the
	// scaled span plus one mean gap, so the first request of a pass does
	// not land on the last one of the pass before.
	period time.Duration
	next   uint64 // requests returned by Next so far
	// block is the tokens a hash id stands for (0: no hash ids).
	block int
	// sessions are an agent trace's sessions; nil for other formats.
	sessions []TraceSession
}

// LoadTrace reads the trace at path. Entries are ordered by timestamp
// (stably, so ties keep file order) and their offsets measured from the
// earliest one. Errors name the file, line and column.
func LoadTrace(path string, opts TraceOptions) (*Trace, error) {
	speed := opts.Speed
	if speed == 0 {
		speed = 1
	}
	if !(speed > 0) || math.IsInf(speed, 0) {
		return nil, fmt.Errorf("trace %s: speed %v: want a finite factor above 0 (2 replays twice as fast)", path, opts.Speed)
	}
	block := cmp.Or(opts.BlockTokens, DefaultBlockTokens)
	if block < 1 || block > MaxBlockTokens {
		return nil, fmt.Errorf("trace %s: block tokens %d: want 1 to %d", path, opts.BlockTokens, MaxBlockTokens)
	}
	if opts.MaxGap < 0 {
		return nil, fmt.Errorf("trace %s: max gap %v: want 0 (keep every gap) or more", path, opts.MaxGap)
	}
	data, err := inputfile.Read(cmp.Or(opts.Context, context.Background()), path, inputfile.Trace)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	format := opts.Format
	if format == "" {
		format = detectTraceFormat(path, data)
	}
	rows, err := parseTrace(format, data, block)
	if err == nil && agentTrace(format) {
		block, err = recordedBlockTokens(rows, opts.BlockTokens)
	}
	if err != nil {
		return nil, fmt.Errorf("trace %s (%s): %w", path, format, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("trace %s (%s): no requests", path, format)
	}
	entries, err := scaleTrace(rows, speed, opts.MaxGap)
	if err != nil {
		return nil, fmt.Errorf("trace %s: %w", path, err)
	}
	t := &Trace{path: path, format: format, speed: speed, loop: opts.Loop, entries: entries,
		recorded: time.Duration(rows[len(rows)-1].ns - rows[0].ns), maxGap: opts.MaxGap}
	if format == TraceMooncake || block > 0 {
		t.block = block
	}
	if agentTrace(format) {
		if opts.Loop {
			return nil, fmt.Errorf("trace %s (%s): loop: an agent trace replays its sessions once", path, format)
		}
		t.sessions = buildSessions(rows, t.entries, speed, opts.MaxGap)
	}
	if t.loop {
		if t.period, err = loopPeriod(t.entries); err != nil {
			return nil, fmt.Errorf("trace %s: %w", path, err)
		}
	}
	return t, nil
}

// traceRow is a parsed line: its timestamp in nanoseconds on the trace's
// own clock (Unix time for dates, seconds from the start for BurstGPT).
type traceRow struct {
	ns                  int64
	input, output, line int
	model               string
	hashIDs             []int64 // Mooncake's block ids; nil for other formats
	// An agent trace's call also has: when its reply ended (ns on the
	// same clock), its session and the session that spawned it, and the
	// tokens its hash ids stand for (0 without ids).
	end             int64
	session, parent string
	block           int
	skip            bool // a line that is not a call (parseTraceDynamo drops it)
}

// maxReplay is the longest scaled span a trace may have. Offsets are
// time.Durations; keeping them under a quarter of the int64 range leaves
// room for many loop passes before Request's arithmetic could overflow.
const maxReplay = time.Duration(math.MaxInt64 / 4)

// scaleTrace orders rows by time and turns timestamps into scaled offsets
// from the first request, each gap cut to maxGap when that is above 0.
// Timestamps are bounded by the parsers, so the difference of two cannot
// overflow; the scaled span is checked.
//
// The cap applies gap by gap on the replayed clock: at speed 2 with
// maxGap 10s, requests recorded at 0, 60s and 61s replay at 0, 10s and
// 10.5s (the 30s gap cut to 10s, the 0.5s one kept).
func scaleTrace(rows []traceRow, speed float64, maxGap time.Duration) ([]TraceEntry, error) {
	slices.SortStableFunc(rows, func(a, b traceRow) int { return cmp.Compare(a.ns, b.ns) })
	first, last := rows[0].ns, rows[len(rows)-1].ns
	if float64(last-first)/speed > float64(maxReplay) {
		return nil, fmt.Errorf("span %v at speed %g is too long to replay", time.Duration(last-first), speed)
	}
	out := make([]TraceEntry, len(rows))
	var prev, cut time.Duration // the previous uncapped offset, and the time cut so far
	for i, r := range rows {
		at := time.Duration(math.Round(float64(r.ns-first) / speed))
		if gap := at - prev; maxGap > 0 && gap > maxGap {
			cut += gap - maxGap
		}
		prev = at
		out[i] = TraceEntry{At: at - cut, InputTokens: r.input, OutputTokens: r.output, Model: r.model,
			HashIDs: r.hashIDs, Line: r.line}
	}
	return out, nil
}

// loopPeriod is the scaled span of the trace plus its mean gap. A trace
// whose requests all share one instant has no period: looping it would
// issue every request of every pass at once.
func loopPeriod(entries []TraceEntry) (time.Duration, error) {
	span := entries[len(entries)-1].At
	if len(entries) < 2 || span <= 0 {
		return 0, errors.New("loop: the trace must span some time (at least two requests at different times)")
	}
	return span + span/time.Duration(len(entries)-1), nil
}

// agentTrace says whether format records agent sessions, replayed as
// sessions (Trace.Sessions) with the block size it records.
func agentTrace(format string) bool { return format == TraceDynamo || format == TraceWeka }

// BlockTokens is the tokens each of the trace's hash ids stands for: the
// option's (or DefaultBlockTokens) for Mooncake, the recorded size for
// Dynamo and Weka; 0 when the trace has no hash ids.
func (t *Trace) BlockTokens() int { return t.block }

// Format is the trace's format, one of TraceFormats.
func (t *Trace) Format() string { return t.format }

// Len returns the number of requests in one pass of the trace.
func (t *Trace) Len() int { return len(t.entries) }

// Entry returns entry i of one pass, 0 <= i < Len().
func (t *Trace) Entry(i int) TraceEntry { return t.entries[i] }

// Request returns what the trace recorded for request i of the replay:
// entry i mod Len(), with At shifted by the passes before it when the
// trace loops. Without Loop, i must be below Len().
func (t *Trace) Request(i uint64) TraceEntry {
	n := uint64(len(t.entries))
	e := t.entries[i%n]
	e.At += time.Duration(i/n) * t.period
	return e
}

// Next returns the intended offset from the run start of the next request,
// or TraceEnd once a trace that does not loop has run out.
func (t *Trace) Next() time.Duration {
	i := t.next
	t.next++
	if !t.loop && i >= uint64(len(t.entries)) {
		return TraceEnd
	}
	return t.Request(i).At
}

// Duration returns the length of one pass: the span of the trace at the
// replay speed (plus one mean gap when it loops).
func (t *Trace) Duration() time.Duration {
	if t.loop {
		return t.period
	}
	return t.entries[len(t.entries)-1].At
}

// String describes the trace for the printout before a run, for example
// "trace azure_conv.csv (azure): 19366 requests over 1h0m0s (5.38/s), replayed at 2× in 30m0s".
func (t *Trace) String() string {
	var b strings.Builder
	span := t.entries[len(t.entries)-1].At
	fmt.Fprintf(&b, "trace %s (%s): %d requests", t.path, t.format, len(t.entries))
	if t.sessions != nil {
		fmt.Fprintf(&b, " in %d sessions", len(t.sessions))
	}
	fmt.Fprintf(&b, " over %s", t.recorded.Round(time.Millisecond))
	if t.recorded > 0 {
		fmt.Fprintf(&b, " (%.2f/s)", float64(len(t.entries)-1)/t.recorded.Seconds())
	}
	fmt.Fprintf(&b, ", replayed at %g× in %s", t.speed, span.Round(time.Millisecond))
	if t.maxGap > 0 {
		fmt.Fprintf(&b, " (gaps cut to %s)", t.maxGap)
	}
	if t.loop {
		fmt.Fprintf(&b, ", looping every %s", t.period.Round(time.Millisecond))
	}
	return b.String()
}
