package live

import (
	"errors"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// TestMonitorConfigure: a monitor made before its plan (the collector's)
// takes the plan's rules while it has observed nothing, and then judges
// as one made with them; after its first record it refuses them, so no
// table mixes records judged by two rules. One 2-turn conversation whose
// turns have a 10 ms TTFT, against a 5 ms TTFT bound: completed, not met.
func TestMonitorConfigure(t *testing.T) {
	t.Parallel()
	turn := func(id uint64, n int, doneMS int64) *record.Result {
		r := ok(doneMS, 10, "chat", 90)
		r.ID, r.Session, r.Turn = id, 7, n
		return r
	}
	rules := MonitorOptions{Rules: record.Rules{SessionTurns: map[string]int{"chat": 2},
		SLOs: &record.SLOs{Default: record.SLO{TTFTMs: 5}}}}
	tests := []struct {
		name      string
		before    int // records observed before Configure
		wantErr   error
		wantTable bool
	}{
		// Configured before any record: the Sessions table, judged.
		{"before the first record", 0, nil, true},
		// Configured after one: refused, no conversation figures at all.
		{"after a record", 1, ErrObservedAlready, false},
	}
	for _, tt := range tests {
		now := time.Unix(0, 0)
		m := NewMonitor(MonitorOptions{Now: func() time.Time { return now }})
		m.Start("d", 0)
		recs := []*record.Result{turn(0, 1, 200), turn(1, 2, 500)}
		for _, r := range recs[:tt.before] {
			m.Observe(r)
		}
		if err := m.Configure(rules); !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: Configure: %v, want %v", tt.name, err, tt.wantErr)
		}
		for _, r := range recs[tt.before:] {
			m.Observe(r)
		}
		got := m.View(0, 0).Sessions["chat"]
		if (got != nil) != tt.wantTable {
			t.Fatalf("%s: sessions %+v, want a table: %v", tt.name, got, tt.wantTable)
		}
		if want := viewOf(rules, recs).Sessions["chat"]; got != nil && (got.Completed != 1 || got.Goodput.Met != 0 || got.Completed != want.Completed || got.Goodput != want.Goodput) {
			t.Errorf("%s: %+v, want 1 completed, 0 met, as a monitor made with the rules (%+v)", tt.name, got, want)
		}
	}
}
