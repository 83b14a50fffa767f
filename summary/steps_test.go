package summary

import (
	"strings"
	"testing"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
)

// TestCapacityReasonSaysWhenTheBudgetCutItShort: an answer the probe
// budget stopped short of the search's precision gives the bracket the
// capacity lies in (the truth suite's 37.3 req/s row: 32 after 10 probes,
// lowest fail 40); one within the precision does not.
func TestCapacityReasonSaysWhenTheBudgetCutItShort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		search      analyze.SearchOptions
		probes      int
		pass, fail  float64
		wantBracket bool
	}{
		{analyze.SearchOptions{}, 10, 32, 40, true},               // default budget spent, 25% apart
		{analyze.SearchOptions{MaxProbes: 20}, 12, 36, 38, false}, // within 10%: the precision ended it
		{analyze.SearchOptions{}, 8, 32, 40, false},               // budget not spent
		{analyze.SearchOptions{Whole: true}, 10, 7, 8, false},     // adjacent whole users: as close as it gets
	}
	for _, tt := range tests {
		o := &CapacityJudging{Mode: record.ModeOpen, Confidence: 0.95, Search: tt.search}
		c := &record.Capacity{Found: true, Load: tt.pass, Probes: make([]record.CapacityProbe, tt.probes)}
		got := capacityReason(o, c, []float64{tt.fail})
		if has := strings.Contains(got, "probe budget"); has != tt.wantBracket {
			t.Errorf("%+v, %d probes, %g..%g: reason %q, bracket said %v, want %v", tt.search, tt.probes, tt.pass, tt.fail, got, has, tt.wantBracket)
		}
	}
}
