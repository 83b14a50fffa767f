package summary

import (
	"path/filepath"
	"testing"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// TestLoadGoodput: compare reads session and task goodput from the
// summary.json the aggregate wrote, with the SLO each class's calls
// were judged by. Built so the truth is known: of 4 two-turn chat
// conversations one has a turn over the 200 ms bound and one a failed
// turn, so 2 of 4 met; of 3 agent tasks one has a call over 300 ms, so
// 2 of 3 met.
func TestLoadGoodput(t *testing.T) {
	t.Parallel()
	chat, agent := record.SLO{E2EMs: 200}, record.SLO{E2EMs: 300}
	var recs []*record.Result
	id := uint64(0)
	for k, turnUS := range [][2]int64{{100_000, 100_000}, {100_000, 250_000}, {100_000, -1}, {150_000, 150_000}} {
		first := id + 1
		for turn, e2e := range turnUS {
			id++
			r := &record.Result{ID: id, Class: "chat", Turn: turn + 1, Session: first,
				SendUS: int64(k)*1_000_000 + int64(turn)*300_000, E2EUS: e2e, Status: 200}
			if e2e < 0 { // a failed turn
				r.E2EUS, r.Status, r.Error = 1_000, 500, record.ErrHTTP5xx
			}
			recs = append(recs, r)
		}
	}
	for k, callUS := range []int64{100_000, 400_000, 200_000} {
		id++
		at := int64(k) * 1_000_000
		recs = append(recs, &record.Result{ID: id, Class: "agent", SendUS: at, E2EUS: 50_000 + callUS, Status: 200,
			Chain: []record.ChainStep{
				{Name: "plan", Kind: "chat", SendUS: at, DurUS: 50_000, Status: 200},
				{Name: "answer", Kind: "chat", SendUS: at + 50_000, DurUS: callUS, Status: 200},
			}})
	}
	a := record.NewAggregate()
	a.SetSLOs(&record.SLOs{Classes: map[string]record.SLO{"chat": chat, "agent": agent}})
	a.SetSessionTurns(map[string]int{"chat": 2})
	for _, r := range recs {
		a.Add(r)
	}
	dir := writeRun(t, recs, nil, "")
	if err := rundir.WriteSummary(filepath.Join(dir, rundir.Summary), a.Summary(record.RunInfo{EndUS: 5_000_000})); err != nil {
		t.Fatal(err)
	}
	rs, err := LoadRunSamples(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  analyze.GoodputShare
		want analyze.GoodputShare
	}{
		// Completed 3 + failed 1; the slow and the failed ones missed.
		{"sessions", rs.SessionGoodput["chat"], analyze.GoodputShare{SLO: chat, Met: 2, Total: 4}},
		// The 400 ms answer missed; the tasks' SLO is the class's.
		{"tasks", rs.TaskGoodput["agent"], analyze.GoodputShare{SLO: agent, Met: 2, Total: 3}},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, tt.got, tt.want)
		}
	}
	if len(rs.SessionGoodput) != 1 || len(rs.TaskGoodput) != 1 {
		t.Errorf("session goodput %v, task goodput %v: want chat and agent only", rs.SessionGoodput, rs.TaskGoodput)
	}
}
