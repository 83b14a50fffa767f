package record

import (
	"math"
	"testing"
)

// llama8B is a Llama-3-8B-like shape.
var llama8B = Model{ParamsB: 8, Layers: 32, Hidden: 4096}

// TestModelFLOPs checks the estimate against sums worked out by hand.
func TestModelFLOPs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		m               Model
		p, o            int
		prefill, decode float64
	}{
		// Parameters only: 2 FLOPs per parameter per token; 10 prompt tokens,
		// 5 output tokens of which 4 are decode steps.
		{"params only", Model{ParamsB: 1}, 10, 5, 2e9 * 10, 2e9 * 4},
		// Attention on a toy model (L·d = 1, N = 0): prefill 2·P·(P+1) = 2·3·4;
		// decode 4·Σ(P+j), j=1..2 = 4·(4+5).
		{"attention sum", Model{ParamsB: 0, Layers: 1, Hidden: 1}, 3, 3, 24, 36},
		// The doc's worked example: 8B, 32×4096, P 1024, O 128.
		{"llama 8B", llama8B, 1024, 128, 1.6384e13 + 2.751463424e11, 2.032e12 + 7.2444018688e10},
		// One output token comes out of the prefill: no decode.
		{"one token", llama8B, 100, 1, llama8B.PrefillFLOPs(100), 0},
		// An empty prompt costs no prefill.
		{"empty prompt", Model{ParamsB: 1}, 0, 2, 0, 2e9},
	}
	for _, tt := range tests {
		if got := tt.m.PrefillFLOPs(tt.p); math.Abs(got-tt.prefill) > 1e-6*math.Max(1, tt.prefill) {
			t.Errorf("%s: PrefillFLOPs(%d) = %g, want %g", tt.name, tt.p, got, tt.prefill)
		}
		if got := tt.m.DecodeFLOPs(tt.p, tt.o); math.Abs(got-tt.decode) > 1e-6*math.Max(1, tt.decode) {
			t.Errorf("%s: DecodeFLOPs(%d, %d) = %g, want %g", tt.name, tt.p, tt.o, got, tt.decode)
		}
	}
}

// TestModelValidate checks which declarations are refused.
func TestModelValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    Model
		ok   bool
	}{
		// Parameters alone are enough.
		{"params", Model{ParamsB: 70}, true},
		// Layers and hidden together add attention.
		{"full", llama8B, true},
		// No size at all is meaningless.
		{"zero", Model{}, false},
		// Layers without hidden cannot give the attention term.
		{"half shape", Model{ParamsB: 8, Layers: 32}, false},
		// NaN is not a size.
		{"nan", Model{ParamsB: math.NaN()}, false},
	}
	for _, tt := range tests {
		if err := tt.m.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// TestComputeSummary checks offered and achieved FLOP/s over the window.
func TestComputeSummary(t *testing.T) {
	t.Parallel()
	m := Model{ParamsB: 1} // 2e9 FLOPs per token
	// Sent at 1 s, 100 prompt tokens, asked for 10 tokens, got 3: events at
	// 1.1, 1.2 and 1.3 s.
	ok := withRes(streamed(1_000_000, []int64{100_000, 200_000, 300_000}, 350_000, 3), func(r *Result) {
		r.PromptTokensSent, r.InputTokens, r.MaxTokens = 100, 100, 10
	})
	failed := withRes(ok, func(r *Result) { r.Error = ErrHTTP5xx; r.SendUS = 2_000_000 })
	late := withRes(ok, func(r *Result) { r.SendUS = 9_850_000 }) // first token at 9.95 s, decode after the 10 s window
	a := NewAggregate()
	a.SetModel(&m)
	for _, r := range []Result{ok, failed, late} {
		a.Add(&r)
	}
	c := a.Summary(closedInfo).Compute
	if c == nil {
		t.Fatal("no compute in summary with a model set")
	}
	want := Compute{
		Model: m,
		// two successes: 100 prompt tokens each, 2 decode steps each.
		PrefillFLOPs: 2 * 2e11, DecodeFLOPs: 2 * 4e9,
		// three arrivals, each asking 100 prompt + 9 decode tokens' worth.
		OfferedFLOPPerS: 3 * (2e11 + 9*2e9) / 10,
		// both prefills (late's first token is inside); only ok's decode:
		// late's decode events at 10.05 and 10.15 s are past the window.
		AchievedPrefillFLOPPerS: 2 * 2e11 / 10, AchievedDecodeFLOPPerS: 4e9 / 10,
	}
	want.AchievedFLOPPerS = want.AchievedPrefillFLOPPerS + want.AchievedDecodeFLOPPerS
	if *c != want {
		t.Errorf("compute = %+v\nwant      %+v", *c, want)
	}
	if s := summarize(closedInfo, []Result{ok}); s.Compute != nil {
		t.Errorf("compute present without a model: %+v", s.Compute)
	}
}
