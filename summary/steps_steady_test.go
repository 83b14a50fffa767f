package summary

import (
	"strings"
	"testing"

	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
)

// TestBuildStepJudgesSteadyState: a step's records are cut into the
// seconds of its measured window and held to the steady-state rule
// (analyze.JudgeSteady). 20 s of 4 replies a second, 20 per second
// measured: with the same TTFT throughout the step is valid; with TTFT
// rising from 80 to 270 ms (a burst that outlasted the warm-up) it is
// not, and says why; a ramp with that rise is judged as before.
func TestBuildStepJudgesSteadyState(t *testing.T) {
	t.Parallel()
	p, err := plan.Parse("plan.yaml", []byte("name: s\ntarget: {url: http://127.0.0.1:1, model: m}\nload: {concurrency: 4, duration: 30s, warmup: 5s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		kind   string
		rising bool
		want   string // in the reasons; "" for a valid step
	}{
		{"steady", record.StepConstant, false, ""},
		{"TTFT rising", record.StepConstant, true, "not steady: TTFT P50 rose"},
		{"ramp", record.StepRamp, true, ""},
	}
	for _, tt := range tests {
		d := Design{Kind: KindStages}
		acc := NewStepAcc(p, d)
		var id uint64
		for ms := int64(0); ms < 25_000; ms += 50 { // 20 replies a second from 0 to 25 s
			ttft := int64(80_000)
			if tt.rising && ms >= 5_000 {
				ttft += (ms - 5_000) * 10 // +10 ms per second of the window
			}
			acc.Add(&record.Result{ID: id, Step: 1, SendUS: ms * 1000, TTFTUS: ttft, E2EUS: ttft + 10_000, Warmup: ms < 5_000,
				Class: "default", OutputTokens: 4})
			id++
		}
		m := record.StageMark{Index: 1, Kind: tt.kind, Mode: record.ModeClosed, Target: 1, StartUS: 0, WarmupEndUS: 5_000_000,
			MeasureEndUS: 25_000_000, EndUS: 25_500_000}
		step, err := BuildStep(acc, m, p, d)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(step.Validity.Reasons, "; ")
		steadyReason := strings.Contains(got, "not steady")
		if tt.want == "" && steadyReason || tt.want != "" && (!strings.Contains(got, tt.want) || step.Validity.Valid) {
			t.Errorf("%s: valid %v, reasons %q; want %q", tt.name, step.Validity.Valid, got, tt.want)
		}
	}
}
