package schedule

import (
	"os"
	"reflect"
	"testing"
	"time"
)

// testdata/trace/weka.json is written in the layout AIPerf documents for
// Weka's agentic coding traces (its weka_trace loader's models: a
// conversation object, its calls of type n and s, a subagent marker with
// its own calls, timed from the marker as older captures are). Its calls,
// in ms (start–end, end = t + api_time):
//
//	conv1 call 0   0–400      blocks 1 2
//	conv1 call 1   1000–1600  blocks 1 2 3 4
//	sub   call 0   1900–2100  (t 0 from the marker at 1.9 s) blocks 1 2 5
//	conv1 call 2   2500–3000  blocks 1 2 3 4 6
//
// Hash ids are the trace's own, renumbered for the file in order of
// appearance: 1 2 3 4 5 6 become 0 1 2 3 4 5.
func TestLoadTraceWeka(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tr, err := LoadTrace("testdata/trace/weka.json", TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format() != TraceWeka || tr.BlockTokens() != 16 {
		t.Errorf("format %q, block tokens %d: want weka, 16", tr.Format(), tr.BlockTokens())
	}
	// sub waits 300 ms after conv1's call 1; conv1's call 2 waits for
	// sub's reply too: 400 ms after the later end (2100).
	want := []TraceEntry{
		{At: 0, InputTokens: 32, OutputTokens: 8, HashIDs: []int64{0, 1}, Line: 1},
		{At: 1000 * ms, InputTokens: 64, OutputTokens: 12, HashIDs: []int64{0, 1, 2, 3}, Line: 1, Turn: 1, Delay: 600 * ms},
		{At: 1900 * ms, InputTokens: 40, OutputTokens: 5, HashIDs: []int64{0, 1, 4}, Line: 1, Session: 1, Delay: 300 * ms},
		{At: 2500 * ms, InputTokens: 80, OutputTokens: 4, HashIDs: []int64{0, 1, 2, 3, 5}, Line: 1, Turn: 2, Delay: 400 * ms},
	}
	got := traceEntries(tr)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entries\n got %+v\nwant %+v", got, want)
	}
	wantSessions := []TraceSession{
		{ID: "conv1", Calls: []int{0, 1, 3}, Parent: -1, ParentCall: -1, Root: 0, Joins: [][]int{nil, nil, {1}}},
		{ID: "conv1::sa:2:agent_001", Calls: []int{2}, Parent: 0, ParentCall: 1, Root: 0},
	}
	if !reflect.DeepEqual(tr.Sessions(), wantSessions) {
		t.Errorf("sessions\n got %+v\nwant %+v", tr.Sessions(), wantSessions)
	}
}

// Two traces of one file (JSON Lines) each name hash id 1: Weka scopes
// ids to their trace, so the replay gives them different blocks; a
// subagent timed on the trace's clock (t after its marker) keeps its t.
func TestLoadTraceWekaScopes(t *testing.T) {
	t.Parallel()
	body := `{"id": "a", "block_size": 4, "hash_id_scope": "local", "requests": [{"t": 0, "type": "n", "in": 4, "out": 1, "hash_ids": [1]}]}
{"id": "b", "block_size": 4, "requests": [{"t": 0.5, "type": "n", "in": 4, "out": 1, "hash_ids": [1], "api_time": 0.1},
  {"t": 1, "type": "subagent", "agent_id": "x", "requests": [{"t": 1.25, "type": "s", "in": 4, "out": 1, "hash_ids": [1]}]}]}
`
	tr, err := LoadTrace(writeTrace(t, "two.jsonl", body), TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	var at []time.Duration
	for i := range tr.Len() {
		ids, at = append(ids, tr.Entry(i).HashIDs...), append(at, tr.Entry(i).At)
	}
	if !reflect.DeepEqual(ids, []int64{0, 1, 1}) || !reflect.DeepEqual(at, []time.Duration{0, 500 * time.Millisecond, 1250 * time.Millisecond}) {
		t.Errorf("hash ids %v at %v: want [0 1 1] at [0 500ms 1.25s]", ids, at)
	}
	if n := len(tr.Sessions()); n != 3 || tr.Entry(2).Line != 2 {
		t.Errorf("%d sessions, last entry on line %d: want 3, line 2", n, tr.Entry(2).Line)
	}
}

func TestLoadTraceWekaErrors(t *testing.T) {
	t.Parallel()
	call := `{"t": 0, "type": "n", "in": 4, "out": 1, "hash_ids": [1]}`
	trace := func(requests string) string {
		return `{"id": "c", "block_size": 4, "hash_id_scope": "local", "requests": [` + requests + `]}`
	}
	tests := []struct {
		name, body string
		want       []string // substrings of the error
	}{
		// Each broken field is named by its path, on the line its trace
		// opens on (the second line: the first trace is good).
		{"id", trace(call) + "\n" + `{"block_size": 4, "hash_id_scope": "local", "requests": []}`, []string{"weka", "line 2", "field id"}},
		{"block", trace(call) + "\n" + `{"id": "d", "block_size": 0, "hash_id_scope": "local", "requests": []}`, []string{"line 2", "trace d", "field block_size"}},
		{"scope", `{"id": "d", "block_size": 4, "hash_id_scope": "global", "requests": []}`, []string{"line 1", "field hash_id_scope", "global"}},
		{"requests", `{"id": "d", "block_size": 4, "hash_id_scope": "local"}`, []string{"line 1", "field requests: missing"}},
		{"t", trace(call + `, {"type": "n", "in": 4, "out": 1}`), []string{"trace c", "requests[1].t: missing"}},
		{"t2", trace(`{"t": -1, "type": "n", "in": 4, "out": 1}`), []string{"requests[0].t: -1"}},
		{"type", trace(`{"t": 0, "type": "x", "in": 4, "out": 1}`), []string{"requests[0].type", `"x"`}},
		{"in", trace(`{"t": 0, "type": "n", "out": 1}`), []string{"requests[0].in: missing"}},
		{"out", trace(`{"t": 0, "type": "s", "in": 3, "out": -2}`), []string{"requests[0].out"}},
		{"api", trace(`{"t": 0, "type": "s", "in": 3, "out": 2, "api_time": -1}`), []string{"requests[0].api_time: -1"}},
		{"hashes", trace(`{"t": 0, "type": "n", "in": 5, "out": 1, "hash_ids": [1, 2, 3]}`), []string{"requests[0].hash_ids: 3 blocks", "at most 2 of 4"}},
		{"hash type", trace(`{"t": 0, "type": "n", "in": 5, "out": 1, "hash_ids": ["a"]}`), []string{"line 1", "field requests.hash_ids"}},
		{"subagent", trace(`{"t": 1, "type": "subagent", "agent_id": "x"}`), []string{"requests[0].requests: missing"}},
		{"nested", trace(`{"t": 1, "type": "subagent", "agent_id": "x", "requests": [{"t": 1, "type": "subagent"}]}`), []string{"requests[0].requests[0].type"}},
		{"inner", trace(`{"t": 1, "type": "subagent", "agent_id": "x", "requests": [{"t": 1, "type": "n", "in": 1}]}`), []string{"requests[0].requests[0].out"}},
		// Broken JSON names the line it breaks on.
		{"syntax", trace(call) + "\n\n" + `{"id": "d",,}`, []string{"line 3"}},
		// Two block sizes in one file.
		{"sizes", trace(call) + "\n" + `{"id": "d", "block_size": 8, "requests": [{"t": 0, "type": "n", "in": 4, "out": 1}]}`, []string{"line 2", "block size 8, but line 1 has 4"}},
	}
	for _, tt := range tests {
		wantTraceError(t, writeTrace(t, tt.name+".json", tt.body), TraceOptions{Format: TraceWeka}, tt.want)
	}
}

// FuzzTraceWeka feeds arbitrary bytes to the Weka parser and builds
// sessions from what parses (checkFuzzedSessions).
func FuzzTraceWeka(f *testing.F) {
	data, err := os.ReadFile("testdata/trace/weka.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzzedSessions(t, parseTraceWeka, data) })
}
