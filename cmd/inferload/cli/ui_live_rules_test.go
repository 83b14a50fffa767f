package cli

import (
	"reflect"
	"testing"
	"time"

	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
)

// TestMonitorOptionsTakeThePlansRules: the live page's aggregate gets the
// rules summary.NewAggregate gets (plan.Plan.Rules), the model's size
// included, which it once missed.
func TestMonitorOptionsTakeThePlansRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    *plan.Plan
	}{
		// A plan declaring a model and an SLO: both reach the page.
		{"model and SLO", &plan.Plan{Compute: plan.Compute{ParamsB: 8},
			Workload: plan.Workload{SLO: record.SLO{TTFTMs: 500}, LengthBuckets: []int{512}}}},
		// A plan declaring neither: nor does the page.
		{"bare", &plan.Plan{}},
	}
	for _, tt := range tests {
		got := monitorOptions(tt.p, time.Now).Rules
		if want := tt.p.Rules(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the live page's rules %+v, want the summary's %+v", tt.name, got, want)
		}
		if (got.Model != nil) != (tt.p.Compute.ParamsB > 0) {
			t.Errorf("%s: model %+v for params_b %g", tt.name, got.Model, tt.p.Compute.ParamsB)
		}
	}
}
