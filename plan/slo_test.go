package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferload/inferload/record"
)

// TestSLOAndComputeValidation checks the bounds on SLOs and model sizes.
func TestSLOAndComputeValidation(t *testing.T) {
	t.Parallel()
	const base = "target: {url: http://127.0.0.1:1/v1}\nload: {concurrency: 1}\n"
	tests := []struct {
		name, yaml, want string // want "" means valid
	}{
		// Bounds in milliseconds, run-wide and per class, are accepted.
		{"ok", "workload:\n  slo: {ttft_ms: 2000, tpot_ms: 100}\n  classes:\n    - {name: a, weight: 1, slo: {e2e_ms: 5000}}\ncompute: {params_b: 8, layers: 32, hidden: 4096}\n", ""},
		// A negative bound is refused with its path.
		{"negative", "workload:\n  slo: {ttft_ms: -1}\n", "workload.slo.ttft_ms: -1: want a bound in milliseconds"},
		// A class's bound is checked too, at its index.
		{"class bound", "workload:\n  classes:\n    - {name: a, weight: 1, slo: {tpot_ms: 1e12}}\n", "workload.classes[0].slo.tpot_ms"},
		// Layers without hidden cannot give the attention term.
		{"half shape", "compute: {params_b: 8, layers: 32}\n", "compute: layers 32, hidden 0: give both"},
		// A shape without a size has no estimate to add to.
		{"no params", "compute: {layers: 32, hidden: 4096}\n", "compute: params_b 0"},
	}
	for _, tt := range tests {
		got := parseErrors(t, base+tt.yaml)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: error %q, want it to contain %q", tt.name, got, tt.want)
		}
	}
}

// TestSLOsAndModel checks the conversion to record's types.
func TestSLOsAndModel(t *testing.T) {
	t.Parallel()
	w := Workload{SLO: record.SLO{TTFTMs: 2000}, Classes: []Class{{Name: "doc", SLO: record.SLO{TTFTMs: 8000, E2EMs: 60000}}}}
	want := &record.SLOs{Default: record.SLO{TTFTMs: 2000},
		Classes: map[string]record.SLO{"doc": {TTFTMs: 8000, E2EMs: 60000}}}
	if diff := cmp.Diff(want, w.SLOs()); diff != "" {
		t.Errorf("SLOs (-want +got):\n%s", diff)
	}
	if m := (Compute{}).Model(); m != nil {
		t.Errorf("Model() = %+v without params_b, want nil", m)
	}
	if m := (Compute{ParamsB: 8}).Model(); m == nil || m.ParamsB != 8 {
		t.Errorf("Model() = %+v, want 8B", m)
	}
}
