package record

import (
	"reflect"
	"testing"
)

// TestSetRules: each rule SetRules sets shows in the summary, and the
// table names every field of Rules, so a rule added there without being
// set (or tested) fails here.
func TestSetRules(t *testing.T) {
	t.Parallel()
	rec := &Result{ID: 1, Class: "chat", Turn: 1, Session: 1, Stream: true, SendUS: 0,
		TTFTUS: 10_000, E2EUS: 50_000, EventsUS: []int64{10_000, 50_000}, InputTokens: 100, OutputTokens: 2}
	tests := []struct {
		field string
		rules Rules
		shows func(s *Summary) bool
	}{
		// Two bounds make three buckets.
		{"InputBuckets", Rules{InputBuckets: []int{64, 512}}, func(s *Summary) bool { return len(s.InputBuckets) == 3 }},
		// A conversational class gets session figures.
		{"SessionTurns", Rules{SessionTurns: map[string]int{"chat": 2}}, func(s *Summary) bool { return s.Sessions["chat"] != nil }},
		// A 5 ms TTFT bound, missed by the 10 ms reply: no goodput.
		{"SLOs", Rules{SLOs: &SLOs{Default: SLO{TTFTMs: 5}}}, func(s *Summary) bool { return s.Goodput.SLO.TTFTMs == 5 && s.Goodput.Met == 0 }},
		// A declared model size: the FLOP estimate.
		{"Model", Rules{Model: &Model{ParamsB: 8}}, func(s *Summary) bool { return s.Compute != nil }},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.field] = true
		info := RunInfo{MeasureEndUS: 1e6, EndUS: 1e6}
		plain := NewAggregate()
		plain.Add(rec)
		if tt.shows(plain.Summary(info)) {
			t.Fatalf("%s: shows without the rule: the row proves nothing", tt.field)
		}
		a := NewAggregate()
		a.SetRules(tt.rules)
		a.Add(rec)
		if !tt.shows(a.Summary(info)) {
			t.Errorf("%s: SetRules(%+v) does not show in the summary", tt.field, tt.rules)
		}
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Rules]()) {
		if !covered[f.Name] {
			t.Errorf("Rules.%s has no row", f.Name)
		}
	}
}
