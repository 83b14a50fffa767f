package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// wekaTrace is one agentic coding conversation as Weka's KV-cache tester
// records it (callanjfox/kv-cache-tester; AIPerf replays it as
// weka_trace): its calls and subagent markers in order, the tokens each
// hash id stands for, and hash ids scoped to the trace.
type wekaTrace struct {
	ID          *string       `json:"id"`
	BlockSize   *int          `json:"block_size"`
	HashIDScope *string       `json:"hash_id_scope"`
	Requests    *[]wekaRecord `json:"requests"`
}

// wekaRecord is one entry of requests: a call (type "n", or "s" when
// streamed) or a subagent marker (type "subagent") holding the subagent's
// own calls. t is seconds on the trace's clock; a subagent's calls are
// timed on it too, or from the marker in older captures.
type wekaRecord struct {
	T        *float64      `json:"t"`
	Type     string        `json:"type"`
	In       *int          `json:"in"`
	Out      *int          `json:"out"`
	HashIDs  []int64       `json:"hash_ids"`
	APITime  *float64      `json:"api_time"`
	AgentID  string        `json:"agent_id"`
	Requests *[]wekaRecord `json:"requests"`
}

// wekaScope maps each trace's local hash ids to ids of the whole file, so
// traces share no block by accident (Weka scopes ids per trace).
type wekaScope struct {
	ids map[[2]int64]int64
}

func (s *wekaScope) global(trace int, id int64) int64 {
	k := [2]int64{int64(trace), id}
	g, ok := s.ids[k]
	if !ok {
		g = int64(len(s.ids))
		s.ids[k] = g
	}
	return g
}

// parseTraceWeka reads Weka traces: one JSON object per trace, a file
// holding one (over any number of lines) or several (JSON Lines). Each
// trace is a session, each subagent a session of its own under it.
// Errors name the line the trace opens on and the field, by its path in
// the trace (requests[3].in).
func parseTraceWeka(data []byte) ([]traceRow, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	scope := &wekaScope{ids: map[[2]int64]int64{}}
	var rows []traceRow
	for n := 0; ; n++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			return rows, nil
		}
		end := int(dec.InputOffset())
		line := lineAt(data, end-len(raw))
		if err != nil {
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				line = lineAt(data, int(syn.Offset))
			}
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		trace, err := parseWekaTrace(raw, n, line, scope)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		rows = append(rows, trace...)
	}
}

// lineAt is the 1-based line of byte offset off in data.
func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// parseWekaTrace reads trace n of the file, which opens on line.
func parseWekaTrace(raw []byte, n, line int, scope *wekaScope) ([]traceRow, error) {
	var t wekaTrace
	if err := decodeTraceLine(raw, &t); err != nil {
		return nil, err
	}
	switch {
	case t.ID == nil || *t.ID == "":
		return nil, errors.New("field id: missing or empty")
	case t.BlockSize == nil || *t.BlockSize < 1 || *t.BlockSize > MaxBlockTokens:
		return nil, fmt.Errorf("trace %s: field block_size: missing or not 1 to %d", *t.ID, MaxBlockTokens)
	case t.HashIDScope != nil && *t.HashIDScope != "local":
		return nil, fmt.Errorf("trace %s: field hash_id_scope: %q: want local (ids scoped to the trace)", *t.ID, *t.HashIDScope)
	case t.Requests == nil:
		return nil, fmt.Errorf("trace %s: field requests: missing", *t.ID)
	}
	w := wekaReader{trace: n, line: line, block: *t.BlockSize, scope: scope}
	var rows []traceRow
	for k, r := range *t.Requests {
		path := fmt.Sprintf("requests[%d]", k)
		if r.Type == "subagent" {
			sub, err := w.subagent(r, *t.ID, path, k)
			if err != nil {
				return nil, fmt.Errorf("trace %s: %w", *t.ID, err)
			}
			rows = append(rows, sub...)
			continue
		}
		row, err := w.call(r, path, 0)
		if err != nil {
			return nil, fmt.Errorf("trace %s: %w", *t.ID, err)
		}
		row.session = *t.ID
		rows = append(rows, row)
	}
	return rows, nil
}

// wekaReader reads the calls of one trace.
type wekaReader struct {
	trace, line, block int
	scope              *wekaScope
}

// subagent reads marker r (entry k of the trace) and its calls, as a
// session of their own under the trace's.
func (w wekaReader) subagent(r wekaRecord, parent, path string, k int) ([]traceRow, error) {
	spawn, err := wekaSeconds(r.T, path+".t")
	if err != nil {
		return nil, err
	}
	if r.Requests == nil {
		return nil, fmt.Errorf("%s.requests: missing", path)
	}
	session := fmt.Sprintf("%s::sa:%d:%s", parent, k, r.AgentID)
	rows := make([]traceRow, 0, len(*r.Requests))
	for j, c := range *r.Requests {
		cpath := fmt.Sprintf("%s.requests[%d]", path, j)
		if c.Type == "subagent" {
			return nil, fmt.Errorf("%s.type: a subagent's calls are n or s, not a subagent", cpath)
		}
		row, err := w.call(c, cpath, spawn)
		if err != nil {
			return nil, err
		}
		row.session, row.parent = session, parent
		rows = append(rows, row)
	}
	return rows, nil
}

// call reads one call: it starts at t seconds and ends api_time later (at
// once without it). In a subagent, a t before the spawn is from the spawn
// (older captures), otherwise on the trace's clock as the parent's.
func (w wekaReader) call(r wekaRecord, path string, spawn float64) (traceRow, error) {
	row := traceRow{line: w.line, block: w.block}
	if r.Type != "n" && r.Type != "s" {
		return row, fmt.Errorf("%s.type: %q: want n, s or subagent", path, r.Type)
	}
	t, err := wekaSeconds(r.T, path+".t")
	if err != nil {
		return row, err
	}
	if t < spawn {
		t += spawn
	}
	api := 0.0
	if r.APITime != nil {
		if api = *r.APITime; !(api >= 0) || api > maxTraceSeconds {
			return row, fmt.Errorf("%s.api_time: %v: want seconds, 0 or more", path, api)
		}
	}
	if t+api > 2*maxTraceSeconds {
		return row, fmt.Errorf("%s.t: %v s and api_time %v s end too late", path, t, api)
	}
	row.ns, row.end = int64(math.Round(t*1e9)), int64(math.Round((t+api)*1e9))
	if err := readTraceTokens(path+".in", r.In, &row.input); err != nil {
		return row, err
	}
	if err := readTraceTokens(path+".out", r.Out, &row.output); err != nil {
		return row, err
	}
	if most := (row.input + w.block - 1) / w.block; len(r.HashIDs) > most {
		return row, fmt.Errorf("%s.hash_ids: %d blocks, but in %d fills at most %d of %d tokens", path, len(r.HashIDs), row.input, most, w.block)
	}
	row.hashIDs = make([]int64, len(r.HashIDs))
	for j, id := range r.HashIDs {
		row.hashIDs[j] = w.scope.global(w.trace, id)
	}
	return row, nil
}

// wekaSeconds reads a time in seconds on a trace's clock.
func wekaSeconds(v *float64, path string) (float64, error) {
	switch {
	case v == nil:
		return 0, fmt.Errorf("%s: missing", path)
	case !(*v >= 0) || *v > maxTraceSeconds:
		return 0, fmt.Errorf("%s: %v: want seconds from the trace's start, 0 to %g", path, *v, maxTraceSeconds)
	}
	return *v, nil
}
