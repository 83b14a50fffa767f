package schedule

import (
	"bytes"
	"errors"
	"fmt"
	"math"
)

// dynamoSchema is the schema every Dynamo request-trace record names
// (ai-dynamo/dynamo, lib/llm/src/request_trace).
const dynamoSchema = "dynamo.request.trace.v1"

// dynamoRecord is one trace event. Only request_end events are calls;
// tool_start, tool_end and tool_error events fall inside the gaps
// between a session's calls, which the replay keeps, so they are read
// for their shape only.
type dynamoRecord struct {
	Schema          *string        `json:"schema"`
	EventType       string         `json:"event_type"`
	EventTimeUnixMS *int64         `json:"event_time_unix_ms"`
	AgentContext    *dynamoAgent   `json:"agent_context"`
	Request         *dynamoRequest `json:"request"`
}

// dynamoAgent names the session a call belongs to, and for a subagent's
// session its parent's: real captures link the parent by
// parent_trajectory_id (a trajectory id equals its session id), older
// ones by parent_session_id.
type dynamoAgent struct {
	SessionID          string `json:"session_id"`
	ParentTrajectoryID string `json:"parent_trajectory_id"`
	ParentSessionID    string `json:"parent_session_id"`
}

// dynamoRequest is a request_end's call: its lengths, when the server
// received it, how long it took, and the replay block hashes of its
// prompt.
type dynamoRequest struct {
	RequestID         string        `json:"request_id"`
	InputTokens       *int          `json:"input_tokens"`
	OutputTokens      *int          `json:"output_tokens"`
	RequestReceivedMS *int64        `json:"request_received_ms"`
	TotalTimeMS       *float64      `json:"total_time_ms"`
	Replay            *dynamoReplay `json:"replay"`
}

// dynamoReplay is the text-free replay metadata: the prompt's block
// hashes (u64 in Dynamo, so they may exceed an int64: each is kept as
// the int64 of the same bits, an id being only a name).
type dynamoReplay struct {
	TraceBlockSize      *int      `json:"trace_block_size"`
	InputLength         *int      `json:"input_length"`
	InputSequenceHashes *[]uint64 `json:"input_sequence_hashes"`
}

// parseTraceDynamo reads a Dynamo request trace: one call per
// request_end line, in sessions. Other event types and the S3 uploader's
// {"verification": ...} marker lines are skipped.
func parseTraceDynamo(data []byte) ([]traceRow, error) {
	rows, err := parseTraceLines(data, parseDynamoLine)
	if err != nil {
		return nil, err
	}
	return dropSkipped(rows), nil
}

// dropSkipped removes the rows parseDynamoLine marked as skipped.
func dropSkipped(rows []traceRow) []traceRow {
	kept := rows[:0]
	for _, r := range rows {
		if !r.skip {
			kept = append(kept, r)
		}
	}
	return kept
}

// parseDynamoLine reads one line: a request_end becomes a call, a tool
// event or marker a skipped row.
func parseDynamoLine(line []byte) (traceRow, error) {
	// A line is a record, bare or inside the file sink's envelope
	// {"timestamp": ms since the writer started, "event": record}.
	rec := &dynamoRecord{}
	if err := decodeTraceLine(line, rec); err != nil {
		return traceRow{}, err
	}
	if rec.Schema == nil {
		var env struct {
			Event *dynamoRecord `json:"event"`
		}
		if err := decodeTraceLine(line, &env); err != nil {
			return traceRow{}, err
		}
		if env.Event != nil {
			rec = env.Event
		}
	}
	switch {
	case rec.Schema == nil && bytes.Contains(line, []byte(`"verification"`)):
		return traceRow{skip: true}, nil
	case rec.Schema == nil:
		return traceRow{}, fmt.Errorf("field schema: missing (want %q)", dynamoSchema)
	case *rec.Schema != dynamoSchema:
		return traceRow{}, fmt.Errorf("field schema: %q: want %q", *rec.Schema, dynamoSchema)
	}
	switch rec.EventType {
	case "request_end":
		return dynamoCall(rec)
	case "tool_start", "tool_end", "tool_error":
		return traceRow{skip: true}, nil
	}
	return traceRow{}, fmt.Errorf("field event_type: %q: want request_end, tool_start, tool_end or tool_error", rec.EventType)
}

// maxTraceMS bounds Unix-millisecond times as maxTraceSeconds bounds
// seconds.
const maxTraceMS = maxTraceSeconds * 1e3

// dynamoCall reads a request_end record: the call ended at
// event_time_unix_ms and started at request_received_ms, or
// total_time_ms before its end, or (neither recorded) at its end.
func dynamoCall(rec *dynamoRecord) (traceRow, error) {
	var row traceRow
	switch ms := rec.EventTimeUnixMS; {
	case ms == nil:
		return row, errors.New("field event_time_unix_ms: missing")
	case *ms < 0 || *ms > maxTraceMS:
		return row, fmt.Errorf("field event_time_unix_ms: %d: want Unix milliseconds, 0 to %g", *ms, maxTraceMS)
	default:
		row.end = *ms * 1e6
	}
	if rec.AgentContext != nil {
		a := rec.AgentContext
		if a.SessionID == "" {
			return row, errors.New("field agent_context.session_id: missing or empty")
		}
		row.session, row.parent = a.SessionID, a.ParentTrajectoryID
		if row.parent == "" {
			row.parent = a.ParentSessionID
		}
	}
	req := rec.Request
	if req == nil {
		return row, errors.New("field request: missing (a request_end records its call)")
	}
	if rec.AgentContext == nil {
		// A record without a session is a session of one call.
		row.session = "request " + req.RequestID
	}
	start, err := dynamoStart(req, row.end)
	if err != nil {
		return row, err
	}
	row.ns = start
	if err := dynamoLengths(req, &row); err != nil {
		return row, err
	}
	return row, nil
}

// dynamoStart is when a call that ended at end (ns) started.
func dynamoStart(req *dynamoRequest, end int64) (int64, error) {
	switch {
	case req.RequestReceivedMS != nil:
		ms := *req.RequestReceivedMS
		if ms < 0 || ms > maxTraceMS || ms*1e6 > end {
			return 0, fmt.Errorf("field request.request_received_ms: %d: want 0 to the event's time, %d", ms, end/1e6)
		}
		return ms * 1e6, nil
	case req.TotalTimeMS != nil:
		d := *req.TotalTimeMS
		if !(d >= 0) || d*1e6 > float64(end) {
			return 0, fmt.Errorf("field request.total_time_ms: %v: want 0 to the event's time", d)
		}
		return end - int64(math.Round(d*1e6)), nil
	}
	return end, nil
}

// dynamoLengths reads a call's lengths and blocks: input_length of the
// replay metadata when there is one (the tokens its hashes stand for),
// else input_tokens.
func dynamoLengths(req *dynamoRequest, row *traceRow) error {
	if err := readTraceTokens("field request.output_tokens", req.OutputTokens, &row.output); err != nil {
		return err
	}
	rp := req.Replay
	if rp == nil {
		if err := readTraceTokens("field request.input_tokens", req.InputTokens, &row.input); err != nil {
			return fmt.Errorf("%w (and no request.replay)", err)
		}
		return nil
	}
	switch b := rp.TraceBlockSize; {
	case b == nil:
		return errors.New("field request.replay.trace_block_size: missing")
	case *b < 1 || *b > MaxBlockTokens:
		return fmt.Errorf("field request.replay.trace_block_size: %d: want 1 to %d", *b, MaxBlockTokens)
	default:
		row.block = *b
	}
	if err := readTraceTokens("field request.replay.input_length", rp.InputLength, &row.input); err != nil {
		return err
	}
	if rp.InputSequenceHashes == nil {
		return errors.New("field request.replay.input_sequence_hashes: missing")
	}
	hashes := *rp.InputSequenceHashes
	if most := (row.input + row.block - 1) / row.block; len(hashes) > most {
		return fmt.Errorf("field request.replay.input_sequence_hashes: %d blocks, but input_length %d fills at most %d of %d tokens",
			len(hashes), row.input, most, row.block)
	}
	row.hashIDs = make([]int64, len(hashes))
	for k, h := range hashes {
		row.hashIDs[k] = int64(h) // the same bits: an id is only a name
	}
	return nil
}

// recordedBlockTokens is the block size of an agent trace's hashes: the
// one its records name (all alike), which an explicit want (load.trace.
// block_tokens) must match; 0 when no record has hashes.
func recordedBlockTokens(rows []traceRow, want int) (int, error) {
	block, line := 0, 0
	for _, r := range rows {
		switch {
		case r.block == 0:
		case block == 0:
			block, line = r.block, r.line
		case r.block != block:
			return 0, fmt.Errorf("line %d: block size %d, but line %d has %d: one block size per file", r.line, r.block, line, block)
		}
	}
	if want != 0 && block != 0 && want != block {
		return 0, fmt.Errorf("block tokens %d, but the trace records blocks of %d (line %d): leave load.trace.block_tokens out", want, block, line)
	}
	return block, nil
}
