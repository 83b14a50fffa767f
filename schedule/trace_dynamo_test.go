package schedule

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testdata/trace/dynamo.jsonl is written in the record layout of Dynamo's
// request trace as AIPerf's docs and fixtures show it
// (dynamo.request.trace.v1 request_end records, one in the file sink's
// envelope, a tool event and the S3 uploader's marker line). Its calls,
// in ms after 1700000001000 (start–end):
//
//	s1   call 0   0–400     blocks 111 222
//	r9            500–700   no session, no blocks
//	s1   call 1   1000–1600 blocks 111 222 333 444
//	sub  call 0   1900–2100 subagent of s1, blocks 111 222 555
//	s1   call 2   2500–3000 blocks 111 222 333 444 666 (total_time_ms)
func TestLoadTraceDynamo(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		opts TraceOptions
		want []TraceEntry
	}{
		// As recorded: each later call waits its gap after the reply
		// before it (s1's call 1: 600 ms after call 0 ended at 400); sub
		// waits 300 ms after s1's call 1, the last of s1's calls to end
		// before it started; s1's call 2, the first to start after sub
		// ended (2100), waits for sub too: 400 ms after the later end.
		{TraceOptions{}, []TraceEntry{
			{At: 0, InputTokens: 32, OutputTokens: 8, HashIDs: []int64{111, 222}, Line: 1},
			{At: 500 * ms, InputTokens: 20, OutputTokens: 3, Line: 2, Session: 1},
			{At: 1000 * ms, InputTokens: 64, OutputTokens: 12, HashIDs: []int64{111, 222, 333, 444}, Line: 3, Turn: 1, Delay: 600 * ms},
			{At: 1900 * ms, InputTokens: 40, OutputTokens: 5, HashIDs: []int64{111, 222, 555}, Line: 6, Session: 2, Delay: 300 * ms},
			{At: 2500 * ms, InputTokens: 80, OutputTokens: 4, HashIDs: []int64{111, 222, 333, 444, 666}, Line: 7, Turn: 2, Delay: 400 * ms},
		}},
		// At 2× every offset and delay halves; a 400 ms cap then cuts
		// the 450 ms gap between the last two starts.
		{TraceOptions{Speed: 2, MaxGap: 400 * ms}, []TraceEntry{
			{At: 0, InputTokens: 32, OutputTokens: 8, HashIDs: []int64{111, 222}, Line: 1},
			{At: 250 * ms, InputTokens: 20, OutputTokens: 3, Line: 2, Session: 1},
			{At: 500 * ms, InputTokens: 64, OutputTokens: 12, HashIDs: []int64{111, 222, 333, 444}, Line: 3, Turn: 1, Delay: 300 * ms},
			{At: 900 * ms, InputTokens: 40, OutputTokens: 5, HashIDs: []int64{111, 222, 555}, Line: 6, Session: 2, Delay: 150 * ms},
			{At: 1200 * ms, InputTokens: 80, OutputTokens: 4, HashIDs: []int64{111, 222, 333, 444, 666}, Line: 7, Turn: 2, Delay: 200 * ms},
		}},
		// A 250 ms cap cuts every delay (600, 300, 400 ms) and every gap
		// between starts (500, 500, 900, 600 ms) to 250 ms.
		{TraceOptions{MaxGap: 250 * ms}, []TraceEntry{
			{At: 0, InputTokens: 32, OutputTokens: 8, HashIDs: []int64{111, 222}, Line: 1},
			{At: 250 * ms, InputTokens: 20, OutputTokens: 3, Line: 2, Session: 1},
			{At: 500 * ms, InputTokens: 64, OutputTokens: 12, HashIDs: []int64{111, 222, 333, 444}, Line: 3, Turn: 1, Delay: 250 * ms},
			{At: 750 * ms, InputTokens: 40, OutputTokens: 5, HashIDs: []int64{111, 222, 555}, Line: 6, Session: 2, Delay: 250 * ms},
			{At: 1000 * ms, InputTokens: 80, OutputTokens: 4, HashIDs: []int64{111, 222, 333, 444, 666}, Line: 7, Turn: 2, Delay: 250 * ms},
		}},
	}
	for _, tt := range tests {
		tr, err := LoadTrace("testdata/trace/dynamo.jsonl", tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Format() != TraceDynamo || tr.BlockTokens() != 16 {
			t.Errorf("format %q, block tokens %d: want dynamo, 16", tr.Format(), tr.BlockTokens())
		}
		got := traceEntries(tr)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%+v:\n got %+v\nwant %+v", tt.opts, got, tt.want)
		}
		wantSessions := []TraceSession{
			{ID: "s1", Calls: []int{0, 2, 4}, Parent: -1, ParentCall: -1, Root: 0, Joins: [][]int{nil, nil, {2}}},
			{ID: "request r9", Calls: []int{1}, Parent: -1, ParentCall: -1, Root: 1},
			{ID: "sub", Calls: []int{3}, Parent: 0, ParentCall: 1, Root: 0},
		}
		if !reflect.DeepEqual(tr.Sessions(), wantSessions) {
			t.Errorf("sessions\n got %+v\nwant %+v", tr.Sessions(), wantSessions)
		}
		if s := tr.String(); !strings.Contains(s, "(dynamo): 5 requests in 3 sessions over 2.5s") {
			t.Errorf("String() = %q", s)
		}
	}
}

func TestLoadTraceDynamoErrors(t *testing.T) {
	t.Parallel()
	ok := `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":2000,"agent_context":{"session_id":"a"},"request":{"request_id":"r","input_tokens":5,"output_tokens":1}}`
	tests := []struct {
		name, body string
		opts       TraceOptions
		want       []string // substrings of the error
	}{
		// Each broken field is named with its line (the first line is
		// good, so the line number is the second's).
		{"schema", ok + "\n" + `{"event_type":"request_end"}`, TraceOptions{Format: TraceDynamo}, []string{"dynamo", "line 2", "field schema: missing"}},
		{"schema2", ok + "\n" + `{"schema":"dynamo.request.trace.v2"}`, TraceOptions{}, []string{"line 2", "field schema", "v2"}},
		{"event", ok + "\n" + `{"schema":"dynamo.request.trace.v1","event_type":"begin"}`, TraceOptions{}, []string{"line 2", "field event_type", "begin"}},
		{"time", ok + "\n" + `{"schema":"dynamo.request.trace.v1","event_type":"request_end","request":{"output_tokens":1,"input_tokens":1}}`, TraceOptions{},
			[]string{"line 2", "field event_time_unix_ms: missing"}},
		{"time2", ok + "\n" + `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":-4}`, TraceOptions{},
			[]string{"line 2", "field event_time_unix_ms: -4"}},
		{"session", ok + "\n" + `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":5,"agent_context":{},"request":{}}`, TraceOptions{},
			[]string{"line 2", "field agent_context.session_id"}},
		{"request", ok + "\n" + `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":5}`, TraceOptions{},
			[]string{"line 2", "field request: missing"}},
		{"output", ok + "\n" + `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":5,"request":{"input_tokens":3}}`, TraceOptions{},
			[]string{"line 2", "field request.output_tokens"}},
		{"input", ok + "\n" + `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":5,"request":{"output_tokens":3,"input_tokens":-1}}`, TraceOptions{},
			[]string{"line 2", "field request.input_tokens"}},
		{"received", ok + "\n" + `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":5,"request":{"output_tokens":3,"input_tokens":1,"request_received_ms":9}}`, TraceOptions{},
			[]string{"line 2", "field request.request_received_ms: 9"}},
		{"total", ok + "\n" + `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":5,"request":{"output_tokens":3,"input_tokens":1,"total_time_ms":-1}}`, TraceOptions{},
			[]string{"line 2", "field request.total_time_ms"}},
		{"block", ok + "\n" + `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":5,"request":{"output_tokens":3,"replay":{"input_length":3,"input_sequence_hashes":[]}}}`, TraceOptions{},
			[]string{"line 2", "field request.replay.trace_block_size: missing"}},
		{"length", ok + "\n" + `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":5,"request":{"output_tokens":3,"replay":{"trace_block_size":4,"input_sequence_hashes":[]}}}`, TraceOptions{},
			[]string{"line 2", "field request.replay.input_length"}},
		{"hashes", ok + "\n" + `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":5,"request":{"output_tokens":3,"replay":{"trace_block_size":4,"input_length":5,"input_sequence_hashes":[1,2,3]}}}`, TraceOptions{},
			[]string{"line 2", "field request.replay.input_sequence_hashes", "3 blocks", "at most 2 of 4"}},
		{"hashes2", ok + "\n" + `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":5,"request":{"output_tokens":3,"replay":{"trace_block_size":4,"input_length":5,"input_sequence_hashes":[-1]}}}`, TraceOptions{},
			[]string{"line 2", "field request.replay.input_sequence_hashes"}},
		// Two block sizes in one trace, and a block size the plan
		// contradicts.
		{"sizes", `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":5,"request":{"output_tokens":3,"replay":{"trace_block_size":4,"input_length":5,"input_sequence_hashes":[1]}}}
{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":5,"request":{"output_tokens":3,"replay":{"trace_block_size":8,"input_length":5,"input_sequence_hashes":[1]}}}`,
			TraceOptions{}, []string{"line 2", "block size 8, but line 1 has 4"}},
		{"option", `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":5,"request":{"output_tokens":3,"replay":{"trace_block_size":4,"input_length":5,"input_sequence_hashes":[1]}}}`,
			TraceOptions{BlockTokens: 64}, []string{"block tokens 64", "blocks of 4"}},
		// Only tool events: no calls.
		{"tools", `{"schema":"dynamo.request.trace.v1","event_type":"tool_end","event_time_unix_ms":5}`, TraceOptions{}, []string{"no requests"}},
		// Sessions are replayed once.
		{"loop", ok, TraceOptions{Loop: true}, []string{"loop", "once"}},
	}
	for _, tt := range tests {
		wantTraceError(t, writeTrace(t, tt.name+".jsonl", tt.body), tt.opts, tt.want)
	}
}

// FuzzTraceDynamo feeds arbitrary bytes to the Dynamo parser and builds
// sessions from what parses (checkFuzzedSessions).
func FuzzTraceDynamo(f *testing.F) {
	data, err := os.ReadFile("testdata/trace/dynamo.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzzedSessions(t, parseTraceDynamo, data) })
}

// checkFuzzedSessions parses data and builds sessions from what parses:
// nothing may panic, every entry belongs to exactly one session at its
// turn, delays are never negative nor above the cap, a session starts
// after one listed before it only, and a call joins only a subagent an
// earlier call of its session spawned (so no replay can deadlock).
func checkFuzzedSessions(t *testing.T, parse func([]byte) ([]traceRow, error), data []byte) {
	rows, err := parse(data)
	if err != nil || len(rows) == 0 {
		return
	}
	if _, err := recordedBlockTokens(rows, 0); err != nil {
		return
	}
	entries, err := scaleTrace(rows, 0.5, time.Hour)
	if err != nil {
		return
	}
	sessions := buildSessions(rows, entries, 0.5, time.Hour)
	seen := make([]bool, len(entries))
	for s, ss := range sessions {
		if ss.Parent >= s || ss.Root > s || (ss.Parent < 0) != (ss.Root == s) {
			t.Fatalf("session %d links %+v", s, ss)
		}
		for k, c := range ss.Calls {
			e := entries[c]
			if seen[c] || e.Session != s || e.Turn != k {
				t.Fatalf("entry %d: %+v in session %d turn %d", c, e, s, k)
			}
			seen[c] = true
			if e.Delay < 0 || e.Delay > time.Hour {
				t.Fatalf("entry %d: delay %v", c, e.Delay)
			}
		}
		for k, joins := range ss.Joins {
			for _, c := range joins {
				if k == 0 || sessions[c].Parent != s || sessions[c].ParentCall >= k {
					t.Fatalf("session %d call %d joins session %d %+v", s, k, c, sessions[c])
				}
			}
		}
	}
	for c, ok := range seen {
		if !ok {
			t.Fatalf("entry %d in no session", c)
		}
	}
}
