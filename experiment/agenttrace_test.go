package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// promptLog is what a fake replica saw: each request's prompt by its
// x-request-id.
type promptLog struct {
	mu     sync.Mutex
	prompt map[string]string
}

// fixedServer is a chat server that answers every request after service,
// noting its prompt in log.
func fixedServer(t *testing.T, service time.Duration, log *promptLog) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) == 0 {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		log.mu.Lock()
		log.prompt[r.Header.Get("x-request-id")] = body.Messages[len(body.Messages)-1].Content
		log.mu.Unlock()
		time.Sleep(service) // the server's processing time, not synchronisation
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// agentTraceCall is what testdata/dynamo.jsonl (and weka.jsonl) recorded
// for one call, by its recorded start (ms): its session's record (turn),
// the call whose reply
// it waits for and the delay after it (its session's previous call; for
// the subagent "helper" its parent's call at 150 ms; for agent's last
// call the later of its previous call and the helper it joins, which
// ends 40 + 80 ms after the former), and the replica its task is kept on
// (agent and its helper on target.url, other on the replica).
type agentTraceCall struct {
	turn    int
	after   int64 // the start (ms) of the call whose reply it waits for; -1 for none
	delayMS int64
	replica int
}

var agentTraceCalls = map[int64]agentTraceCall{
	0:   {1, -1, 0, 1},   // agent: blocks 1 2
	20:  {1, -1, 0, 2},   // other: blocks 1 2 9
	150: {2, 0, 100, 1},  // agent: blocks 1 2 3 4, 100 ms after 0–50
	240: {1, 150, 40, 1}, // helper (agent's subagent): blocks 7 8 5, 40 ms after 150–200
	320: {3, 240, 30, 1}, // agent: blocks 1 2 3 4 6, 30 ms after helper's 240–290
}

// An agent trace replays session by session against two replicas
// of a fixed 80 ms service (the trace recorded 50 ms, so a call sent at
// its recorded timestamp would come before the reply it waits for
// ended, and fail the timing check): each later call is
// due its recorded delay after the reply before it ended, a subagent's
// first call after its parent's call, the parent's next call after the
// subagent's reply; the calls of one task go to one
// replica; records carry each call's turn and its session; and prompts
// that share hash ids share exactly that prefix on the wire.
// testdata/weka.jsonl records the same calls as testdata/dynamo.jsonl in
// Weka's layout (two traces, agent with its helper and other), whose hash
// ids are scoped to their trace: there other shares no block with agent.
func TestRunAgentTraceSessions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file      string
		crossTask bool // other's blocks 1 2 are agent's
	}{{"dynamo.jsonl", true}, {"weka.jsonl", false}} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			runAgentTrace(t, tc.file, tc.crossTask)
		})
	}
}

// runAgentTrace replays testdata/file and checks its records.
func runAgentTrace(t *testing.T, file string, crossTask bool) {
	log := &promptLog{prompt: map[string]string{}}
	urls := [2]string{fixedServer(t, 80*time.Millisecond, log), fixedServer(t, 80*time.Millisecond, log)}
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s, replicas: [%s]}
load: {trace: {path: %s}}
`, urls[0], urls[1], filepath.Join("testdata", file)))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Each record by its call's recorded start, found from its prompt's
	// length (the trace's input lengths are all different).
	byStart := map[int64]*record.Result{}
	prompts := map[int64]string{}
	startOf := map[int]int64{32: 0, 48: 20, 64: 150, 40: 240, 80: 320}
	eachRecord(t, res.Dir, func(r *record.Result) error {
		if !r.OK() {
			return fmt.Errorf("request %d failed: %s %s", r.ID, r.Error, r.ErrorMsg)
		}
		start, ok := startOf[r.PromptTokensSent]
		if !ok {
			return fmt.Errorf("request %d: prompt of %d tokens not in the trace", r.ID, r.PromptTokensSent)
		}
		c := *r
		byStart[start] = &c
		prompts[start] = log.prompt[r.TraceID]
		return nil
	})
	if len(byStart) != len(agentTraceCalls) {
		t.Fatalf("%d calls recorded, want %d", len(byStart), len(agentTraceCalls))
	}
	checkAgentTraceTiming(t, byStart)
	checkAgentTracePrompts(t, prompts, crossTask)
	// Three sessions, each completed: the agent's 3 calls, other's and
	// the helper's 1 each.
	if s := res.Summary.Sessions[record.DefaultClass]; s == nil || s.Completed != 3 || s.CallsPerSession != 5.0/3 || len(s.PerTurn) != 3 {
		t.Errorf("summary sessions %+v: want 3 completed, 5/3 calls each, 3 turns", s)
	}
	if s := byStart[0].Session; byStart[150].Session != s || byStart[320].Session != s || byStart[20].Session == s || byStart[240].Session == s {
		t.Errorf("sessions: agent's calls %d %d %d, other %d, helper %d: want agent's alike, the others their own",
			s, byStart[150].Session, byStart[320].Session, byStart[20].Session, byStart[240].Session)
	}
	expectRebuildIdentical(t, res.Dir)
}

// checkAgentTraceTiming holds each call to its due time: never before the
// reply it waits for ended plus its delay (the reply ended at its
// DoneUS: intended time plus E2E), and within 25 ms after it (generous: the engine
// notes the end as the stream closes and sends at once).
func checkAgentTraceTiming(t *testing.T, byStart map[int64]*record.Result) {
	t.Helper()
	for start, c := range agentTraceCalls {
		r := byStart[start]
		if r.Turn != c.turn || r.Replica != c.replica {
			t.Errorf("call at %d ms: turn %d replica %d, want %d %d", start, r.Turn, r.Replica, c.turn, c.replica)
		}
		if c.after < 0 {
			continue
		}
		prev := byStart[c.after]
		ended := prev.DoneUS()
		if lo, hi := ended+c.delayMS*1000, ended+(c.delayMS+25)*1000; r.IntendedUS < lo || r.IntendedUS > hi {
			t.Errorf("call at %d ms due at %d µs, want %d to %d (%d ms after the reply that ended at %d µs)", start, r.IntendedUS, lo, hi, c.delayMS, ended)
		}
	}
}

// checkAgentTracePrompts holds the prompts to their blocks: the first call's
// (blocks 1 2) opens every prompt that starts with blocks 1 2, each of
// the agent's calls opens the next (its blocks extend), other's (1 2 9)
// and the agent's second (1 2 3 4) part after their shared blocks, and
// the helper's (7 8 5) shares none of them. crossTask says other's ids
// name agent's blocks (false: ids scoped to their trace, other opens
// with blocks of its own).
func checkAgentTracePrompts(t *testing.T, prompts map[int64]string, crossTask bool) {
	t.Helper()
	for _, pair := range [][2]int64{{0, 150}, {150, 320}} {
		if a, b := prompts[pair[0]], prompts[pair[1]]; a == "" || !strings.HasPrefix(b, a) {
			t.Errorf("prompt of the call at %d ms (%d bytes) does not open the one at %d ms", pair[0], len(a), pair[1])
		}
	}
	if strings.HasPrefix(prompts[20], prompts[0]) != crossTask {
		t.Errorf("the first prompt opens other's: %v, want %v", !crossTask, crossTask)
	}
	if a, b := prompts[20], prompts[150]; strings.HasPrefix(a, b) || strings.HasPrefix(b, a) {
		t.Errorf("other's prompt and the agent's second are one the other's prefix: blocks 9 and 3 should differ")
	}
	if strings.HasPrefix(prompts[240], prompts[0]) {
		t.Errorf("the helper's prompt opens with blocks 1 2, which it does not have")
	}
}

// An in-flight cap would do nothing to a replay whose sessions send one
// call at a time: the run refuses it, naming the field.
func TestRunDynamoRefusesMaxInFlight(t *testing.T) {
	t.Parallel()
	p := testPlan(t, fmt.Sprintf(`
target: {url: http://127.0.0.1:1/v1, preflight: false}
load: {trace: {path: %s}, max_in_flight: 2}
`, filepath.Join("testdata", "dynamo.jsonl")))
	if _, err := Run(context.Background(), p, Options{}); err == nil || !strings.Contains(err.Error(), "load.max_in_flight") {
		t.Errorf("error %v, want one naming load.max_in_flight", err)
	}
}
