package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

func TestWriteSummarySteps(t *testing.T) {
	t.Parallel()
	valid := record.Step{Index: 1, Kind: record.StepConstant, Mode: record.ModeClosed, Target: 8,
		Throughput: record.Throughput{RequestsPerS: 400, OutputTokensPerS: 6400},
		Metrics:    record.Metrics{E2E: record.Stats{Count: 400, P50: 18, P99: 25}},
		Validity:   record.Validity{Valid: true, Percentiles: map[string]string{"e2e": "p99", "ttft": "none", "itl": "none"}}}
	weak := valid
	weak.Index, weak.Kind, weak.From, weak.Target = 2, record.StepRamp, 8, 16
	weak.Validity = record.Validity{Valid: false, Reasons: []string{"too few"}, Percentiles: map[string]string{"e2e": "p90"}}
	tests := []struct {
		name string
		s    record.Summary
		want []string
		not  []string
	}{
		// A single-phase run prints no steps table.
		{"no steps", record.Summary{}, nil, []string{"Steps", "Knee"}},
		// A backed P99 prints plain; an unbacked one is starred; an invalid
		// step says NO with its reason; the knee's reason closes the table.
		{"steps and knee", record.Summary{Steps: []record.Step{valid, weak}, Knee: &record.Knee{Reason: "the knee is 8 users"}},
			[]string{"Steps", "   25.0 ", "25.0*", "8→16u", "NO", "step 2: too few", "Knee          the knee is 8 users"}, []string{"Capacity"}},
		// A capacity search prints its answer and each probe's verdict.
		{"capacity", record.Summary{Steps: []record.Step{valid}, Capacity: &record.Capacity{Reason: "capacity 8 users",
			Probes: []record.CapacityProbe{{Step: 1, Load: 8, Passed: true, Reasons: []string{"E2E p90 holds"}}}}},
			[]string{"Capacity      capacity 8 users", "step 1 at 8: pass: E2E p90 holds"}, []string{"Knee"}},
		// A soak prints a verdict per figure, drifted ones marked with "!",
		// those too short to test with "?".
		{"soak", record.Summary{Soak: &record.Soak{WindowS: 300, Windows: make([]record.SoakWindow, 72), Drift: []record.Drift{
			{Metric: "P99 TTFT", Tested: true, Drifted: true, Verdict: "P99 TTFT rose 38% over 6h0m0s (95% CI +21% to +55%)"},
			{Metric: "throughput", Tested: true, Verdict: "throughput: no significant trend"},
			{Metric: "P99 E2E", Verdict: "P99 E2E drift not tested"}}}},
			[]string{"Drift over 72 windows of 300s", "! P99 TTFT rose 38% over 6h0m0s (95% CI +21% to +55%)", "  throughput: no significant trend",
				"? P99 E2E drift not tested"}, []string{"Steps"}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := WriteSummary(&b, &tt.s); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.name, w, out)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(out, w) {
				t.Errorf("%s: output has %q:\n%s", tt.name, w, out)
			}
		}
	}
}

// TestWriteSummarySweepLeads: a run of several steps opens with its
// answers and the steps table; the run-wide figures follow, headed as
// the pool of every load they are.
func TestWriteSummarySweepLeads(t *testing.T) {
	t.Parallel()
	st := record.Step{Index: 1, Kind: record.StepConstant, Mode: record.ModeClosed, Target: 8}
	s := record.Summary{Steps: []record.Step{st, st}, Knee: &record.Knee{Reason: "the knee is 8 users"},
		Operating: &record.OperatingPoint{Reason: "at most 4 users: the highest step at which every objective held"}}
	var b bytes.Buffer
	if err := WriteSummary(&b, &s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	order := []string{"Run at        at most 4 users", "\nSteps\n", "Knee          the knee is 8 users", "All 2 steps pooled: a mix of loads", "Requests ", "Latency (ms)"}
	last := -1
	for _, w := range order {
		i := strings.Index(out, w)
		if i <= last {
			t.Fatalf("%q is at %d, after %d: want the order %q\n%s", w, i, last, order, out)
		}
		last = i
	}
	var one bytes.Buffer
	s.Steps = s.Steps[:1]
	if err := WriteSummary(&one, &s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(one.String(), "pooled") || strings.Index(one.String(), "Requests ") > strings.Index(one.String(), "Steps") {
		t.Errorf("a single step is no pool: its figures lead as a plain run's\n%s", one.String())
	}
}

// TestVerdictRunsLine: each run's verdict in run order, "none" where a run
// found none, and the first most common with how many runs agree; nothing
// for a verdict the experiment does not draw.
func TestVerdictRunsLine(t *testing.T) {
	t.Parallel()
	v := func(f float64) *float64 { return &f }
	for _, tt := range []struct {
		runs []*float64
		want string
	}{
		{[]*float64{v(24), v(24), v(32)}, "24 users, 24 users, 32 users: 24 users in 2 of 3 runs"},
		{[]*float64{nil, v(64), nil}, "none, 64 users, none: none in 2 of 3 runs"},
		{nil, ""},
	} {
		if got := verdictRunsLine(tt.runs, record.ModeClosed); got != tt.want {
			t.Errorf("verdictRunsLine(%v) = %q, want %q", tt.runs, got, tt.want)
		}
	}
}

// TestWriteSummaryAccuracy: graded replies' accuracy is printed for the
// run and for each step that graded any; a run that graded none prints no
// accuracy row.
func TestWriteSummaryAccuracy(t *testing.T) {
	t.Parallel()
	a := &record.Accuracy{Graded: 181, Correct: 120, Unparsable: 2, Rate: 120.0 / 181, UnparsableRate: 2.0 / 181}
	st := record.Step{Index: 2, Kind: record.StepConstant, Mode: record.ModeClosed, Target: 8, Accuracy: a}
	var b bytes.Buffer
	if err := WriteSummary(&b, &record.Summary{Accuracy: a, Steps: []record.Step{st}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Accuracy      66.3 % correct (120 of 181 graded replies)   2 unparsable (1.1 %)", "  step 2 accuracy: 66.3 % correct"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteSummary(&b, &record.Summary{}); err != nil || strings.Contains(b.String(), "Accuracy") {
		t.Errorf("an ungraded run prints accuracy:\n%s", b.String())
	}
}
