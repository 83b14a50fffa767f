package sim

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestReasoningLength: how a reasoning profile splits a reply between
// reasoning and answer, and that other profiles and APIs do not reason.
func TestReasoningLength(t *testing.T) {
	t.Parallel()
	fixed := func(n int) LengthDist { return LengthDist{Kind: "fixed", Mean: n} }
	tests := []struct {
		name      string
		reasoning LengthDist
		g         generation
		out       int // the answer's drawn length
		total     int
		why       string
		reasoned  int
	}{
		// 30 reasoning tokens before a 20-token answer: 50 in all.
		{"reason then answer", fixed(30), generation{api: apiChat, maxTokens: 100}, 20, 50, "stop", 30},
		// max_tokens 40 cuts the answer: 30 reasoning, 10 answer, "length".
		{"cap cuts the answer", fixed(30), generation{api: apiChat, maxTokens: 40}, 20, 40, "length", 30},
		// max_tokens 16 ends the reply while it reasons.
		{"cap cuts reasoning", fixed(30), generation{api: apiChat, maxTokens: 16}, 16, 16, "length", 16},
		// ignore_eos runs to max_tokens; reasoning is its first 30.
		{"ignore_eos", fixed(30), generation{api: apiChat, maxTokens: 64, ignoreEOS: true}, 64, 64, "length", 30},
		// The completions API does not reason.
		{"completions", fixed(30), generation{api: apiCompletions, maxTokens: 100}, 20, 20, "stop", 0},
		// A profile without reasoning_length does not reason.
		{"no reasoning", LengthDist{}, generation{api: apiChat, maxTokens: 100}, 20, 20, "stop", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &Server{prof: Profile{ReasoningLength: tt.reasoning}}
			why := "stop"
			if tt.g.ignoreEOS || tt.out >= tt.g.maxTokens {
				why = "length"
			}
			total, why, reasoned := s.reasoningLength(tt.g, tt.out, why, rand.New(rand.NewPCG(1, 2)))
			if total != tt.total || why != tt.why || reasoned != tt.reasoned {
				t.Errorf("%d tokens (%s), %d reasoning; want %d (%s), %d", total, why, reasoned, tt.total, tt.why, tt.reasoned)
			}
		})
	}
}

// TestReasoningEffort: a profile's reasoning_effort gives each named
// effort its own reasoning length; a request naming none, or one not
// listed, reasons for reasoning_length (or not at all without it).
func TestReasoningEffort(t *testing.T) {
	t.Parallel()
	fixed := func(n int) LengthDist { return LengthDist{Kind: "fixed", Mean: n} }
	efforts := map[string]LengthDist{"low": fixed(10), "high": fixed(90)}
	tests := []struct {
		name     string
		prof     Profile
		effort   string
		reasoned int
	}{
		{"high", Profile{ReasoningEffort: efforts}, "high", 90},
		{"low", Profile{ReasoningEffort: efforts}, "low", 10},
		{"unlisted effort, no default", Profile{ReasoningEffort: efforts}, "medium", 0},
		{"no effort, no default", Profile{ReasoningEffort: efforts}, "", 0},
		{"unlisted effort falls back to the default", Profile{ReasoningEffort: efforts, ReasoningLength: fixed(40)}, "medium", 40},
		{"no effort falls back to the default", Profile{ReasoningEffort: efforts, ReasoningLength: fixed(40)}, "", 40},
		{"effort without a map", Profile{ReasoningLength: fixed(40)}, "high", 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &Server{prof: tt.prof}
			g := generation{api: apiChat, maxTokens: 1000, effort: tt.effort}
			total, _, reasoned := s.reasoningLength(g, 20, "stop", rand.New(rand.NewPCG(1, 2)))
			if reasoned != tt.reasoned || total != 20+tt.reasoned {
				t.Errorf("%d reasoning of %d; want %d of %d", reasoned, total, tt.reasoned, 20+tt.reasoned)
			}
		})
	}
}

func TestReasoningEffortValidate(t *testing.T) {
	t.Parallel()
	p := tiny()
	p.ReasoningEffort = map[string]LengthDist{"high": {Kind: "fixed", Mean: 0}}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), `reasoning_effort "high": mean must be > 0`) {
		t.Errorf("a zero-mean effort: %v", err)
	}
	p.ReasoningEffort = map[string]LengthDist{" ": {Kind: "fixed", Mean: 5}}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "empty effort name") {
		t.Errorf("an empty effort name: %v", err)
	}
	p.ReasoningEffort = map[string]LengthDist{"high": {Kind: "fixed", Mean: 5}}
	if err := p.Validate(); err != nil || !p.Reasons() {
		t.Errorf("a valid effort: %v, reasons %v", err, p.Reasons())
	}
}
