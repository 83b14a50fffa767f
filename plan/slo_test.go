package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

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

// TestObjectives: the goodput SLOs as capacity objectives, one per class
// that has bounds (its own over the run's), or the run's with no classes.
func TestObjectives(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		w    Workload
		want []record.SLO
	}{
		{"none declared", Workload{}, nil},
		{"run-wide only", Workload{SLO: record.SLO{TTFTMs: 500}}, []record.SLO{{TTFTMs: 500, Share: 0.9}}},
		{"per class over the run's", Workload{SLO: record.SLO{TPOTMs: 50}, Classes: []Class{
			{Name: "chat", SLO: record.SLO{TTFTMs: 500}}, {Name: "batch"}}},
			[]record.SLO{{TTFTMs: 500, TPOTMs: 50, Share: 0.9, Class: "chat"}, {TPOTMs: 50, Share: 0.9, Class: "batch"}}},
		{"a class without bounds is not judged", Workload{Classes: []Class{{Name: "chat", SLO: record.SLO{TTFTMs: 500}}, {Name: "batch"}}},
			[]record.SLO{{TTFTMs: 500, Share: 0.9, Class: "chat"}}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.w.Objectives(0.9)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestSLOInThresholdLanguage: workload.slo and a class's slo read the
// threshold language as one string or a list, the mapping form stays
// the older spelling of the same bounds, and a bad bound is refused at
// its field and line. --goodput-slo lays bounds over the file's bound by bound;
// --class takes slo=... once per bound.
func TestSLOInThresholdLanguage(t *testing.T) {
	t.Parallel()
	const base = "target: {url: http://127.0.0.1:1/v1}\nload: {concurrency: 1}\n"
	parse := func(yaml string) *Plan {
		t.Helper()
		p, err := Parse("plan.yaml", []byte(base+yaml))
		if err != nil {
			t.Fatalf("%q: %v", yaml, err)
		}
		return p
	}
	for _, yaml := range []string{
		"workload:\n  slo: ttft <= 2s, tpot <= 100ms\n",
		"workload:\n  slo: [\"ttft_ms <= 2000\", \"tpot < 0.1s\"]\n",
		"workload:\n  slo: {ttft_ms: 2000, tpot_ms: 100}\n",
	} {
		if got := parse(yaml).Workload.SLO; got != (record.SLO{TTFTMs: 2000, TPOTMs: 100}) {
			t.Errorf("%q: slo %+v, want TTFT 2000 ms and TPOT 100 ms", yaml, got)
		}
	}
	p := parse("workload:\n  classes:\n    - {name: a, weight: 1, slo: \"e2e <= 5s\"}\n")
	if got := p.Workload.Classes[0].SLO; got != (record.SLO{E2EMs: 5000}) {
		t.Errorf("class slo %+v, want E2E 5000 ms", got)
	}
	for yaml, want := range map[string]string{
		"workload:\n  slo: ttft.p99 <= 2s\n":         "plan.yaml:4: workload.slo: SLO \"ttft.p99 <= 2s\": a per-request bound has no percentile",
		"workload:\n  slo: [ttft <= 1s, [x]]\n":      "workload.slo: want a bound such as",
		"workload:\n  slo: ttft <= 1s, ttft <= 2s\n": "already bounded",
	} {
		if got := parseErrors(t, base+yaml); !strings.Contains(got, want) {
			t.Errorf("%q: error %q, want it to contain %q", yaml, got, want)
		}
	}

	path := writePlan(t, base+"workload:\n  slo: {ttft_ms: 2000, e2e_ms: 9000}\n")
	fl := newFlags(t, "--goodput-slo", "ttft<=500ms", "--goodput-slo", "tpot<=40ms", "--class", "name=a,weight=1,slo=ttft<=1s,slo=e2e<=3s")
	p, err := Load(path, fl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Workload.SLO; got != (record.SLO{TTFTMs: 500, TPOTMs: 40, E2EMs: 9000}) {
		t.Errorf("--slo over the file: %+v, want TTFT 500, TPOT 40 and the file's E2E 9000", got)
	}
	if got := p.Workload.Classes[0].SLO; got != (record.SLO{TTFTMs: 1000, E2EMs: 3000}) {
		t.Errorf("--class slo: %+v", got)
	}
	for _, args := range [][]string{{"--goodput-slo", "ttft<=1s", "--goodput-slo", "ttft<=2s"}, {"--goodput-slo", "itl<=5ms"},
		{"--class", "name=a,slo=ttft<=1s,slo=ttft<=2s"}} {
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		BindFlags(fs)
		if err := fs.Parse(args); err == nil {
			t.Errorf("%q: accepted", args)
		}
	}
}
