package record

import (
	"encoding/json"
	"slices"
	"testing"
)

// turnRec is turn k of conversation sess of class chat: sent at sendMS,
// streamed, TTFT ttftMS, ending e2eMS later, in input tokens, 5 out.
func turnRec(sess uint64, k int, sendMS, ttftMS, e2eMS int64, in int) Result {
	return Result{ID: sess + uint64(k) - 1, Class: "chat", Turn: k, Session: sess, SendUS: sendMS * 1000,
		Stream: true, TTFTUS: ttftMS * 1000, EventsUS: []int64{ttftMS * 1000}, E2EUS: e2eMS * 1000,
		InputTokens: in, OutputTokens: 5}
}

// sessionRecords are conversations of 3 turns whose verdicts are known by
// construction, under an SLO of E2E ≤ 500 ms. In a 10 s window:
//
//	10: 3 turns, every one within the SLO: completed, met; 1 000 ms
//	    (sent at 1 000 ms, last turn ends at 2 000 ms), 60 in, 15 out
//	20: 3 turns, turn 2 takes 800 ms: completed, not met; 1 500 ms
//	30: turn 2 failed (HTTP 500): failed, though turn 3 came
//	40: 2 turns, then the run ended: incomplete
//	50: turn 3 canceled by the run's end: incomplete, not failed
//	60: turn 1 in warm-up: left out (its later turns are per-request
//	    figures still)
//
// and a single request of another class, which holds no conversation.
func sessionRecords() []Result {
	fail := turnRec(30, 2, 3300, 0, 100, 20)
	fail.Stream, fail.EventsUS, fail.TTFTUS, fail.Error, fail.Status = false, nil, 0, ErrHTTP5xx, 500
	cut := turnRec(50, 3, 5700, 0, 50, 30)
	cut.Stream, cut.EventsUS, cut.TTFTUS, cut.Error = false, nil, 0, ErrCanceled
	warm := turnRec(60, 1, 0, 20, 100, 10)
	warm.Warmup = true
	long := turnRec(20, 1, 2000, 50, 200, 10)
	long.ReplyCut = true // its reply was too long to thread
	return []Result{
		turnRec(10, 1, 1000, 50, 200, 10), turnRec(10, 2, 1300, 60, 300, 20), turnRec(10, 3, 1700, 70, 300, 30),
		long, turnRec(20, 2, 2300, 60, 800, 20), turnRec(20, 3, 3200, 70, 300, 30),
		turnRec(30, 1, 3000, 50, 200, 10), fail, turnRec(30, 3, 3500, 70, 300, 30),
		turnRec(40, 1, 4000, 50, 200, 10), turnRec(40, 2, 4300, 60, 300, 20),
		turnRec(50, 1, 5000, 50, 200, 10), turnRec(50, 2, 5300, 60, 300, 20), cut,
		warm, turnRec(60, 2, 200, 60, 300, 20), turnRec(60, 3, 600, 70, 300, 30),
		{ID: 99, Class: "single", SendUS: 9e6, E2EUS: 1000},
	}
}

func summarizeSessions(recs []Result) *Summary {
	a := NewAggregate()
	a.SetSLOs(&SLOs{Default: SLO{E2EMs: 500}})
	a.SetSessionTurns(map[string]int{"chat": 3})
	for i := range recs {
		a.Add(&recs[i])
	}
	return a.Summary(closedInfo)
}

func TestSessionFigures(t *testing.T) {
	t.Parallel()
	recs := sessionRecords()
	reversed := slices.Clone(recs)
	slices.Reverse(reversed)
	for _, order := range []struct {
		name string
		recs []Result
	}{{"as written", recs}, {"reversed", reversed}} {
		s := summarizeSessions(order.recs)
		if len(s.Sessions) != 1 || s.Sessions["chat"] == nil {
			t.Fatalf("%s: sessions %v, want chat's alone", order.name, s.Sessions)
		}
		c := s.Sessions["chat"]
		turns := make([][4]float64, len(c.PerTurn))
		for k, tf := range c.PerTurn {
			turns[k] = [4]float64{float64(tf.Turn), float64(tf.Requests), tf.InputTokensMean, tf.TTFTP50}
		}
		for _, tt := range []struct {
			name      string
			got, want any
		}{
			// 10 and 20 completed; 30 failed; 40 and 50 cut by the end; 60 warm-up.
			{"counts", [3]int64{c.Completed, c.Failed, c.Incomplete}, [3]int64{2, 1, 2}},
			{"turns", c.Turns, 3},
			// 1 000 and 1 500 ms: both completed conversations, nothing else.
			{"duration", [3]float64{float64(c.Duration.Count), c.Duration.Min, c.Duration.Max}, [3]float64{2, 1000, 1500}},
			{"calls", c.CallsPerSession, 3.0},
			{"tokens", [2]float64{c.InputTokensPerSession, c.OutputTokensPerSession}, [2]float64{60, 15}},
			// Only 10 met the SLO in every call; 20's 800 ms turn missed:
			// 1 of 3 judged (completed + failed), 1 in 10 s.
			{"goodput", c.Goodput, SessionGoodput{Met: 1, Attainment: 1.0 / 3, SessionsPerS: 0.1}},
			// Turn 1: 10..50 (60's is warm-up); turn 2: 10, 20, 40, 50, 60
			// (30's failed); turn 3: 10, 20, 30, 60 (50's canceled).
			// Prompts grow 10, 20, 30 tokens, TTFT 50, 60, 70 ms.
			{"per turn", turns, [][4]float64{{1, 5, 10, 50}, {2, 5, 20, 60}, {3, 4, 30, 70}}},
			// 20's first reply alone was cut.
			{"replies cut", c.RepliesCut, int64(1)},
		} {
			if !equalJSON(t, tt.got, tt.want) {
				t.Errorf("%s: %s = %+v, want %+v", order.name, tt.name, tt.got, tt.want)
			}
		}
	}
}

// TestSessionsAbsent: a run without conversations has no sessions, and
// neither has a conversational record of a class not declared to hold
// them (turns unknown, so no conversation can be judged whole).
func TestSessionsAbsent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		recs  []Result
		turns map[string]int
	}{
		{"single requests", []Result{aggBase, aggBase}, map[string]int{"chat": 3}},
		{"turns unknown", sessionRecords(), nil},
	} {
		a := NewAggregate()
		a.SetSessionTurns(tc.turns)
		for i := range tc.recs {
			a.Add(&tc.recs[i])
		}
		if s := a.Summary(closedInfo); s.Sessions != nil {
			t.Errorf("%s: sessions %v, want none", tc.name, s.Sessions)
		}
	}
}

// TestSessionSummaryRepeatable: summarising while conversations are open
// judges them incomplete without closing them, so a later turn still
// completes its conversation.
func TestSessionSummaryRepeatable(t *testing.T) {
	t.Parallel()
	a := NewAggregate()
	a.SetSessionTurns(map[string]int{"chat": 3})
	recs := []Result{turnRec(10, 1, 1000, 50, 200, 10), turnRec(10, 2, 1300, 60, 300, 20), turnRec(10, 3, 1700, 70, 300, 30)}
	a.Add(&recs[0])
	a.Add(&recs[1])
	if c := a.Summary(closedInfo).Sessions["chat"]; c.Incomplete != 1 || c.Completed != 0 {
		t.Fatalf("open: %+v, want 1 incomplete", c)
	}
	a.Add(&recs[2])
	if c := a.Summary(closedInfo).Sessions["chat"]; c.Incomplete != 0 || c.Completed != 1 || c.Duration.Count != 1 {
		t.Errorf("closed: %+v, want 1 completed", c)
	}
}

// equalJSON compares two figures by their JSON form.
func equalJSON(t *testing.T, got, want any) bool {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	return string(g) == string(w)
}

// TestRecordedSessionFigures: the sessions of a replayed agent trace
// differ in length and their class declares no turns; each record says
// its session's calls (SessionCalls), so each is judged whole once that
// many are in. Under E2E ≤ 500 ms, by construction:
//
//	10: 3 calls, all within the SLO: completed, met; 1 000 ms
//	70: 1 call: completed, met; 200 ms (a one-call session counts)
//	80: 2 calls, 1 came: incomplete
func TestRecordedSessionFigures(t *testing.T) {
	t.Parallel()
	rec := func(sess uint64, k, calls int, sendMS int64) Result {
		r := turnRec(sess, k, sendMS, 50, 200, 10*k)
		r.Class, r.SessionCalls = "default", calls
		if sess == 10 && k == 3 {
			r.E2EUS = 300 * 1000
		}
		return r
	}
	recs := []Result{rec(10, 1, 3, 1000), rec(10, 2, 3, 1300), rec(10, 3, 3, 1700), rec(70, 1, 1, 2000), rec(80, 1, 2, 3000)}
	a := NewAggregate()
	a.SetSLOs(&SLOs{Default: SLO{E2EMs: 500}})
	for i := range recs {
		a.Add(&recs[i])
	}
	c := a.Summary(closedInfo).Sessions["default"]
	if c == nil {
		t.Fatal("no sessions for the recorded sessions' class")
	}
	got := [6]float64{float64(c.Completed), float64(c.Incomplete), float64(c.Duration.Count), c.Duration.Max, c.CallsPerSession, float64(c.Goodput.Met)}
	want := [6]float64{2, 1, 2, 1000, 2, 2}
	if got != want || c.Turns != 0 {
		t.Errorf("completed, incomplete, durations, longest, calls per session, met = %v, want %v; turns %d, want 0 (they vary)", got, want, c.Turns)
	}
}
