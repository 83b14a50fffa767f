package analyze

import (
	"math/rand/v2"
	"testing"

	"github.com/inferload/inferload/record"
)

// conversationRun is a run of n 3-turn "chat" conversations beside
// single "doc" requests: each turn takes 100-150 ms times slow, a user
// thinks 20 ms between turns, so a conversation takes about 3 × 125 ×
// slow + 40 ms; the k-th conversation's last turn failed when failEvery
// divides k (it then has no time to finish).
func conversationRun(name string, seed uint64, n int, slow float64, failEvery int) *RunSamples {
	rng := rand.New(rand.NewPCG(seed, 1))
	rs := NewRunSamples(name)
	rs.SetSessionTurns(map[string]int{"chat": 3})
	id := uint64(0)
	for k := range n {
		at := int64(k) * 1_000_000
		first := id
		for turn := 1; turn <= 3; turn++ {
			e2e := callUS(rng, slow)
			r := &record.Result{ID: id, Class: "chat", Turn: turn, Session: first, SendUS: at, E2EUS: e2e, Status: 200}
			if failEvery > 0 && k%failEvery == 0 && turn == 3 {
				r.Error, r.Status = record.ErrHTTP5xx, 500
			}
			rs.Add(r)
			id++
			at += e2e + 20_000
		}
		rs.Add(&record.Result{ID: id, Class: "doc", SendUS: at, E2EUS: 50_000, Status: 200})
		id++
	}
	rs.Close(record.RunInfo{})
	return rs
}

// TestCompareSessions: two runs of conversations get session_ms rows,
// overall and for the conversational class, from their completed
// conversations only; a 30% slower conversation is worse and breaks a
// session_ms.p90=10% limit, an equal one does not, and runs without
// conversations get no row.
func TestCompareSessions(t *testing.T) {
	t.Parallel()
	base := conversationRun("base", 1, 200, 1, 0)
	tests := []struct {
		name       string
		cur        *RunSamples
		completed  int    // the current run's completed conversations
		change     string // session_ms.p90's
		regression bool
	}{
		// Every turn 30% slower: so is every conversation.
		{"slower", conversationRun("slower", 2, 200, 1.3, 0), 200, "worse", true},
		// Same timings, other draws: no change.
		{"same", conversationRun("same", 3, 200, 1, 0), 200, "same", false},
		// One conversation in four failed: it has no time to finish, the
		// other 150 keep the same times.
		{"failed", conversationRun("failed", 4, 200, 1, 4), 150, "same", false},
	}
	for _, tt := range tests {
		if n := len(tt.cur.Overall.Session); n != tt.completed {
			t.Errorf("%s: %d session times, want %d", tt.name, n, tt.completed)
		}
		metrics := []string{"session_ms.p90", "classes.chat.session_ms.p90"}
		c := compareTimes(t, tt.name, base, tt.cur, metrics[0], map[string]string{metrics[0]: tt.change, metrics[1]: tt.change}, tt.regression)
		for _, metric := range metrics {
			// 3 turns of 100-150 ms and 2 thinks of 20 ms: 340-490 ms.
			if d := deltaOf(t, c, metric); d.Baseline < 340 || d.Baseline > 490 {
				t.Errorf("%s: %s baseline %.0f ms, want 340-490", tt.name, metric, d.Baseline)
			}
		}
		if indexDelta(c.Deltas, "classes.doc.session_ms.p50") >= 0 {
			t.Errorf("%s: a single-request class has session times", tt.name)
		}
	}
	plain := NewRunSamples("plain") // turns unknown: no conversations joined
	plain.Add(&record.Result{ID: 1, Class: "chat", Turn: 1, Session: 1, E2EUS: 1000, Status: 200})
	if c := Compare(base, plain, CompareOptions{}); indexDelta(c.Deltas, "session_ms.p50") >= 0 {
		t.Error("session_ms compared against a run without conversations")
	}
}
