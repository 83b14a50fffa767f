package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/inferload/inferload/distributed"
	"github.com/inferload/inferload/live"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// collectLivePlan has a 2-turn conversational class and a 2-call chain
// class, judged by one SLO: TTFT ≤ 50 ms; %d is the segment.
const collectLivePlan = `name: cluster-live
target: {url: http://127.0.0.1:1}
load: {concurrency: 4, duration: 10s, segment: %d/2}
workload:
  slo: {ttft_ms: 50}
  classes:
    - {name: chat, weight: 1, input_tokens: 16, output_tokens: 8, turns: 2}
    - name: rag
      weight: 1
      input_tokens: 16
      output_tokens: 8
      chain:
        - {api: chat, name: draft}
        - {api: chat, name: answer}
`

// collectLiveRecords are segment seg's records, known by construction.
// Conversations are numbered as the segments number them (local first
// turn k of segment s of 2 is session 2k+s): segment 0 holds sessions 0,
// 2 and 4, segment 1 sessions 1 and 3; every turn's TTFT is 10 ms except
// one turn of session 2 and one of session 3 (80 ms): 5 conversations
// completed, 3 met the SLO. Tasks: segment 0 two (the second's answer
// 80 ms to its first token), segment 1 one: 3 tasks, 2 met.
func collectLiveRecords(seg int) []*record.Result {
	var out []*record.Result
	id := uint64(seg)
	add := func(r *record.Result) {
		r.ID, r.Stream, r.Status, r.OutputTokens, r.InputTokens = id, true, 200, 8, 16
		id += 2
		out = append(out, r)
	}
	turn := func(session uint64, n int, ttftMS int64) {
		send := int64(session)*1_000_000 + int64(n)*300_000
		add(&record.Result{Class: "chat", Session: session, Turn: n, SendUS: send, TTFTUS: ttftMS * 1000,
			E2EUS: 200_000, EventsUS: []int64{ttftMS * 1000, 200_000}})
	}
	task := func(at, answerTTFTMS int64) {
		add(&record.Result{Class: "rag", SendUS: at, TTFTUS: 110_000, E2EUS: 300_000, EventsUS: []int64{110_000, 300_000},
			Chain: []record.ChainStep{
				{Name: "draft", Kind: "chat", SendUS: at, TTFTUS: 10_000, DurUS: 100_000, Status: 200},
				{Name: "answer", Kind: "chat", SendUS: at + 100_000, TTFTUS: answerTTFTMS * 1000, DurUS: 200_000, Status: 200},
			}})
	}
	slow := map[[2]uint64]bool{{2, 2}: true, {3, 1}: true}
	for s := uint64(seg); s < 5; s += 2 {
		for n := 1; n <= 2; n++ {
			ttft := int64(10)
			if slow[[2]uint64{s, uint64(n)}] {
				ttft = 80
			}
			turn(s, n, ttft)
		}
	}
	task(6_000_000+int64(seg)*100_000, 10)
	if seg == 0 {
		task(7_000_000, 80)
	}
	return out
}

// TestCollectorLiveSessionsAndTasks: the collector's page, fed two
// segments' conversations and tasks, serves the Sessions and Tasks
// tables judged by the plan's SLO, whether the plan came before the
// records or after (the page holds them for it), and as a monitor made
// with the plan's rules judges the same records (the local page's).
func TestCollectorLiveSessionsAndTasks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		planBefore bool
	}{
		// The plan in each segment's first upload, as segments send it.
		{"plan first", true},
		// Both segments' records before any plan: held, then judged.
		{"records first", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			state, want := collectLiveState(t, tt.planBefore)
			s, c := state.Sessions["chat"], state.Chains["rag"]
			if s == nil || c == nil || c.Goodput == nil {
				t.Fatalf("served sessions %v, tasks %v: want both, task goodput judged", state.Sessions, state.Chains)
			}
			if s.Turns != 2 || s.Completed != 5 || s.Failed != 0 || s.Goodput.Met != 3 || s.CallsPerSession != 2 {
				t.Errorf("sessions %+v: want 5 completed 2-turn conversations, 3 met", s)
			}
			if c.Chains != 3 || c.Failed != 0 || c.Goodput.Met != 2 || c.Goodput.SLO.TTFTMs != 50 {
				t.Errorf("tasks %+v goodput %+v: want 3 tasks, 2 met TTFT ≤ 50 ms", c, c.Goodput)
			}
			if s.Goodput != want.Sessions["chat"].Goodput || *c.Goodput != *want.Chains["rag"].Goodput {
				t.Errorf("served goodput %+v / %+v, a run's page judges %+v / %+v", s.Goodput, *c.Goodput,
					want.Sessions["chat"].Goodput, *want.Chains["rag"].Goodput)
			}
		})
	}
}

// collectLiveState feeds a 2-segment collector with --ui the records of
// collectLiveRecords over its HTTP API, the plan before or after them,
// and returns the page's served state and the view of a monitor made
// with the plan's rules over the same records.
func collectLiveState(t *testing.T, planBefore bool) (live.State, live.View) {
	t.Helper()
	now := func() time.Time { return time.Unix(1000, 0) }
	const token = "collect-live-token-1234"
	dir := t.TempDir()
	v := newCollectView(2, now)
	col, err := distributed.NewCollector(distributed.CollectorConfig{Segments: 2, Dir: filepath.Join(dir, "gathered"), Now: now, Feed: v.feed()})
	if err != nil {
		t.Fatal(err)
	}
	v.col = col
	var stderr bytes.Buffer
	st := &State{Stderr: &stderr, Getenv: func(k string) string {
		if k == uiTokenEnv {
			return token
		}
		return ""
	}}
	closeUI, err := v.serveUI(st, &uiFlags{listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer closeUI(context.Background(), nil, nil)
	srv := httptest.NewServer(col.Handler())
	defer srv.Close()
	sendPlan := func() {
		for seg := range 2 {
			put(t, srv.URL, seg, rundir.Plan, fmt.Appendf(nil, collectLivePlan, seg))
		}
	}
	if planBefore {
		sendPlan()
	}
	var all []*record.Result
	for seg := range 2 {
		var lines []byte
		for _, r := range collectLiveRecords(seg) {
			b, _ := json.Marshal(r)
			lines = append(append(lines, b...), '\n')
			all = append(all, r)
		}
		put(t, srv.URL, seg, rundir.RecordsPlain, lines)
	}
	if !planBefore {
		sendPlan()
	}
	v.tick() // a second's tick: the held records meet the plan
	base := regexp.MustCompile(`http://[^ ]+`).FindString(stderr.String())
	var state live.State
	getJSON(t, base+"api/state", token, &state)
	p := v.runPlan()
	if p == nil {
		t.Fatal("no plan read")
	}
	mon := live.NewMonitor(monitorOptions(p, now))
	for _, r := range all {
		mon.Observe(r)
	}
	return state, mon.View(0, 0)
}

// put appends body to segment seg's file name on the collector at url.
func put(t *testing.T, url string, seg int, name string, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("%s/v1/segments/%d/files/%s?offset=0", url, seg, name), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT %s of segment %d: %s %s", name, seg, resp.Status, msg)
	}
}

// getJSON decodes the answer to GET url, sent with the bearer token.
func getJSON(t *testing.T, url, token string, v any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s %s", url, resp.Status, msg)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// TestCollectorLiveWithoutPlan: records that come before any plan are
// held, not shown under rules the plan would contradict; the page shows
// them under the default rules, with a note, once it has held maxHeld or
// the run is over.
func TestCollectorLiveWithoutPlan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		records   int
		over      bool  // the run ended (release(true))
		wantShown int64 // records on the page
	}{
		// A few records, the run going on: held.
		{"held", 3, false, 0},
		// The run over: shown, with the note.
		{"run over", 3, true, 3},
		// maxHeld records: shown without waiting longer, with the note.
		{"too many held", maxHeld, false, maxHeld},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			now := func() time.Time { return time.Unix(1000, 0) }
			v := newCollectView(2, now)
			col, err := distributed.NewCollector(distributed.CollectorConfig{Segments: 2, Dir: t.TempDir(), Now: now})
			if err != nil {
				t.Fatal(err)
			}
			v.col = col
			v.mon = live.NewMonitor(live.MonitorOptions{Now: now})
			for i := range tt.records {
				v.record(i%2, &record.Result{ID: uint64(i), Class: "chat", Session: uint64(i / 2), Turn: 1 + i%2, SendUS: 1000, E2EUS: 1000})
			}
			if tt.over {
				v.release(true)
			}
			view := v.mon.View(0, 0)
			noted := len(view.Events) == 1 && view.Events[0].Message == errNoPlan.Error()
			if view.Completed != tt.wantShown || noted != (tt.wantShown > 0) || view.Sessions != nil {
				t.Errorf("page: %d records, events %+v, sessions %v; want %d shown, the note with them, no session figures without a plan",
					view.Completed, view.Events, view.Sessions, tt.wantShown)
			}
		})
	}
}
