package plan

import (
	"reflect"
	"testing"

	"github.com/inferload/inferload/record"
)

// TestRulesFromPlan: a plan that declares every rule gives a
// record.Rules with every field set, each from its plan field, so a rule
// added to record.Rules but not taken from the plan fails here (the
// summary and the live page both read them through Plan.Rules).
func TestRulesFromPlan(t *testing.T) {
	t.Parallel()
	p := &Plan{
		Workload: Workload{LengthBuckets: []int{128, 2048},
			SLO:     record.SLO{TTFTMs: 500},
			Classes: []Class{{Name: "chat", Weight: 1, Turns: 3}, {Name: "doc", Weight: 1}}},
		Compute: Compute{ParamsB: 8},
	}
	r := p.Rules()
	v := reflect.ValueOf(r)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("Rules().%s is unset from a plan that declares it", v.Type().Field(i).Name)
		}
	}
	if !reflect.DeepEqual(r.InputBuckets, []int{128, 2048}) || !reflect.DeepEqual(r.SessionTurns, map[string]int{"chat": 3}) ||
		r.SLOs == nil || r.SLOs.Default.TTFTMs != 500 || r.Model == nil || r.Model.ParamsB != 8 {
		t.Errorf("Rules() = %+v, want the plan's buckets, chat's 3 turns, its 500 ms TTFT SLO and an 8B model", r)
	}
	// A plan that declares no model: no FLOP estimate.
	if r := (&Plan{}).Rules(); r.Model != nil {
		t.Errorf("Rules() of a plan without compute = %+v, want no model", r)
	}
}
