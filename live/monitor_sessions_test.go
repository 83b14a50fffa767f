package live

import (
	"testing"

	"github.com/inferload/inferload/record"
)

// TestMonitorSessions: the page's data carry summary.json's session
// figures when the run has conversations, and none otherwise. Two
// 2-turn conversations: one of 300 ms (turns of 100 ms, 100 ms apart),
// one whose second turn failed; a single request of another class.
func TestMonitorSessions(t *testing.T) {
	t.Parallel()
	turn := func(id, session uint64, n int, sendMS int64, failed bool) *record.Result {
		r := ok(sendMS+100, 10, "chat", 90)
		r.ID, r.Session, r.Turn = id, session, n
		if failed {
			r.Error, r.Status = record.ErrHTTP5xx, 500
		}
		return r
	}
	recs := []*record.Result{turn(0, 0, 1, 0, false), turn(1, 0, 2, 200, false),
		turn(2, 2, 1, 1000, false), turn(3, 2, 2, 1200, true), ok(1500, 10, "single", 5)}
	tests := []struct {
		name  string
		turns map[string]int
		want  bool
	}{
		// The plan's conversational classes: figures per conversation.
		{"conversations", map[string]int{"chat": 2}, true},
		// No class holds conversations: no sessions in the page's data.
		{"none", nil, false},
	}
	for _, tt := range tests {
		v := viewOf(MonitorOptions{Rules: record.Rules{SessionTurns: tt.turns}}, recs)
		c := v.Sessions["chat"]
		if (c != nil) != tt.want || (!tt.want && v.Sessions != nil) {
			t.Fatalf("%s: sessions %v, want some: %v", tt.name, v.Sessions, tt.want)
		}
		if !tt.want {
			continue
		}
		if c.Turns != 2 || c.Completed != 1 || c.Failed != 1 || c.Duration.Count != 1 || c.Duration.P50 < 299 || c.Duration.P50 > 301 || c.CallsPerSession != 2 {
			t.Errorf("%s: chat %+v: want 2 turns, 1 completed in 300 ms, 1 failed, 2 calls", tt.name, c)
		}
		if v.Sessions["single"] != nil {
			t.Errorf("%s: a single-request class has session figures", tt.name)
		}
	}
}
