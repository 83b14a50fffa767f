package experiment

import (
	"fmt"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
)

// TestSessionsAgainstSim: 3-turn conversations beside single requests,
// against the simulator. Every record of a conversation names its turn
// and its first turn's id; every completed conversation made 3 calls;
// the conversations account for every request of the class (each turn 1
// started one, and only the users' last ones may be cut by the request
// budget, one a user at most).
func TestSessionsAgainstSim(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	res := runPlan(t, fmt.Sprintf(`
name: sessions
target: {url: %s}
load: {concurrency: 4, requests: 80}
workload:
  classes:
    - {name: chat, weight: 3, input_tokens: "32", output_tokens: "4", turns: 3}
    - {name: single, weight: 1, input_tokens: "16", output_tokens: "4"}
`, url))
	sum := res.Summary
	if len(sum.Sessions) != 1 || sum.Sessions["chat"] == nil {
		t.Fatalf("sessions %v, want chat's alone", sum.Sessions)
	}
	c, chat := sum.Sessions["chat"], sum.Classes["chat"]
	t.Logf("chat: %d requests; %d completed, %d failed, %d incomplete conversations; %.1f calls each; duration p50 %.1f ms (%s backed)",
		chat.Requests.Succeeded, c.Completed, c.Failed, c.Incomplete, c.CallsPerSession, c.Duration.P50, c.DurationBacked)
	var perTurn int64
	for _, tf := range c.PerTurn {
		perTurn += tf.Requests
	}
	for _, tt := range []struct {
		name      string
		got, want any
	}{
		{"calls per session", c.CallsPerSession, 3.0},
		{"failed", c.Failed, int64(0)},
		{"turns", len(c.PerTurn), 3},
		// Completed conversations hold 3 requests each, the cut ones 1 or 2.
		{"requests in conversations", perTurn, chat.Requests.Succeeded},
		{"first turns", c.PerTurn[0].Requests, c.Completed + c.Incomplete},
		{"durations", c.Duration.Count, c.Completed},
		{"cut at most one a user", c.Incomplete <= 4, true},
		// Each turn resends the history: prompts grow by an exchange.
		{"prompts grow", c.PerTurn[0].InputTokensMean < c.PerTurn[1].InputTokensMean &&
			c.PerTurn[1].InputTokensMean < c.PerTurn[2].InputTokensMean, true},
		// Without an SLO every completed conversation met it.
		{"goodput", c.Goodput.Met, c.Completed},
	} {
		if fmt.Sprint(tt.got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	checkSessionRecords(t, res.Dir)
}

// checkSessionRecords reads the run's records back: a conversation's
// turns are 1, 2, 3 in send order and its session is its first turn's id;
// single requests carry neither.
func checkSessionRecords(t *testing.T, dir string) {
	t.Helper()
	turns := map[uint64][]*record.Result{}
	_, err := rundir.ReadRecords(rundir.RecordsFile(dir), func(r *record.Result) error {
		if (r.Class == "chat") != (r.Turn > 0) {
			t.Errorf("record %d of class %s: turn %d", r.ID, r.Class, r.Turn)
		}
		if r.Turn > 0 {
			turns[r.Session] = append(turns[r.Session], r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for sess, rs := range turns {
		for k, r := range rs {
			if r.Turn != k+1 || (k == 0 && r.ID != sess) || (k > 0 && r.SendUS < rs[k-1].DoneUS()) {
				t.Errorf("session %d: record %d is turn %d, sent at %d µs, want turn %d after the previous one's end", sess, r.ID, r.Turn, r.SendUS, k+1)
			}
		}
	}
}

// TestSessionsAtARate: conversations under an open loop. load.rate counts
// conversations started: at a constant 20/s for 1.5 s, 30 start (the
// chat class alone), each turn due think_time after its predecessor's
// reply; the later turns thread the simulator's real replies, so they ask
// to reuse more than the previous prompt.
func TestSessionsAtARate(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	res := runPlan(t, fmt.Sprintf(`
name: sessions-rate
target: {url: %s}
load: {rate: 20, arrival: constant, duration: 1500ms, think_time: 20ms, grace: 10s}
workload:
  classes:
    - {name: chat, weight: 1, input_tokens: "32", output_tokens: "4", turns: 3}
`, url))
	c := res.Summary.Sessions["chat"]
	if c == nil {
		t.Fatalf("sessions %v, want chat's", res.Summary.Sessions)
	}
	started := c.Completed + c.Failed + c.Incomplete
	t.Logf("%d conversations: %d completed, %d incomplete; duration p50 %.1f ms", started, c.Completed, c.Incomplete, c.Duration.P50)
	// 30 arrivals are due in 1.5 s at 20/s; a host too busy to issue
	// some before the end issues fewer (seen: 27), never more. The exact
	// count is engine's TestConversationsUnderOpenLoop, on a fake clock.
	if started > 30 || started < 24 || c.PerTurn[0].Requests != started || c.Failed != 0 {
		t.Errorf("%d conversations started (%d first turns, %d failed), want 24-30 at 20/s for 1.5 s, one first turn each", started, c.PerTurn[0].Requests, c.Failed)
	}
	checkSessionRecords(t, res.Dir)
	prompt := map[uint64]int{} // each conversation's last prompt sent
	eachRecord(t, res.Dir, func(r *record.Result) error {
		if r.Late && r.Turn > 1 {
			t.Errorf("record %d: a later turn counted late", r.ID)
		}
		if r.Turn > 1 && r.Error == record.ErrNone && r.ReuseTokens <= prompt[r.Session] {
			t.Errorf("record %d (turn %d): reuse %d, want above the previous prompt's %d (the real reply counts)", r.ID, r.Turn, r.ReuseTokens, prompt[r.Session])
		}
		prompt[r.Session] = r.PromptTokensSent
		return nil
	})
}
