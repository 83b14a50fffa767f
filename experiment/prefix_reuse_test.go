package experiment

import (
	"fmt"
	"math"
	"testing"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/sim"
)

// TestPrefixReuseOfPrefixesAndTurns: a class whose prompts open with one
// of two shared prefixes, and a class of three-turn conversations, against
// the simulator's prefix cache (16-token blocks). Every request after the
// first of its prefix group asks to reuse the prefix, every later turn its
// previous turn's prompt; the run and each class report that requested
// share beside what the server served, which the block size keeps a little
// below it (a partly filled last block is not cached). The conversations'
// history is synthetic so each turn's reuse is known by construction (the
// simulator caches its real replies too: sim's
// TestConversationCachesReplies).
func TestPrefixReuseOfPrefixesAndTurns(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	res := runPlan(t, fmt.Sprintf(`
name: prefix-reuse
target: {url: %s}
load: {concurrency: 4, requests: 90}
workload:
  classes:
    - {name: rag, weight: 1, input_tokens: "64", output_tokens: "4", shared_prefix: {tokens: 512, groups: 2}}
    - {name: chat, weight: 1, input_tokens: "32", output_tokens: "8", turns: 3, history: synthetic}
`, url))
	sum := res.Summary
	rag, chat := sum.Classes["rag"], sum.Classes["chat"]
	if sum.PrefixReuse == nil || rag == nil || rag.PrefixReuse == nil || chat == nil || chat.PrefixReuse == nil {
		t.Fatalf("prefix_reuse: run %+v, classes %v", sum.PrefixReuse, sum.Classes)
	}
	for _, c := range []struct {
		name      string
		requested float64 // by construction
		tolerance float64
		got       float64
		achieved  float64
	}{
		// All but the first request of each of the 2 groups reuse 512 of
		// 576 tokens.
		{"rag", 512.0 / 576 * (1 - 2/float64(rag.PrefixReuse.Requests)), 0.01, rag.PrefixReuse.RequestedShare, rag.PrefixReuse.AchievedShare},
		// Turns of 32, 72 and 112 tokens reuse 0, 32 and 72 of them:
		// 104 of 216 over whole conversations.
		{"chat", 104.0 / 216, 0.05, chat.PrefixReuse.RequestedShare, chat.PrefixReuse.AchievedShare},
	} {
		t.Logf("%s: requested %.3f (built %.3f), achieved %.3f", c.name, c.got, c.requested, c.achieved)
		if math.Abs(c.got-c.requested) > c.tolerance {
			t.Errorf("%s: requested share %.3f, built %.3f", c.name, c.got, c.requested)
		}
		if c.achieved > c.got+0.02 || c.achieved < c.got-0.1 {
			t.Errorf("%s: the simulator's cache served %.3f where %.3f was asked: want at most 0.1 below (blocks of 16)", c.name, c.achieved, c.got)
		}
	}
	// Per turn: the first asks for nothing, the second for the first's
	// 32 of its 72 tokens, the third for 72 of 112.
	turns := sum.Sessions["chat"]
	if turns == nil || len(turns.PerTurn) != 3 || turns.PerTurn[0].PrefixReuse != nil ||
		turns.PerTurn[1].PrefixReuse == nil || turns.PerTurn[2].PrefixReuse == nil {
		t.Fatalf("sessions.chat.per_turn %+v: want 3 turns, reuse from the second", turns)
	}
	for k, want := range map[int]float64{1: 32.0 / 72, 2: 72.0 / 112} {
		pr := turns.PerTurn[k].PrefixReuse
		t.Logf("turn %d: requested %.3f, achieved %.3f", k+1, pr.RequestedShare, pr.AchievedShare)
		if math.Abs(pr.RequestedShare-want) > 0.01 || pr.AchievedShare > pr.RequestedShare+0.02 || pr.AchievedShare < pr.RequestedShare-0.15 {
			t.Errorf("turn %d: requested %.3f (built %.3f), served %.3f", k+1, pr.RequestedShare, want, pr.AchievedShare)
		}
	}
	for _, h := range sum.Hints {
		if h.Rule == "prefix_reuse_low" {
			t.Errorf("prefix_reuse_low fired on a cache that served what was asked: %s", h.Message)
		}
	}
}

// TestPrefixReuseFromServerCounters: a simulator that, like vLLM without
// --enable-prompt-tokens-details, reports no cached tokens per reply; the
// run's achieved share then comes from its prefix-cache counters' increase
// over the measured window, scraped from its /metrics, and matches what
// the same workload measured per reply above (the prefix of 512 tokens in
// 576, 16-token blocks).
func TestPrefixReuseFromServerCounters(t *testing.T) {
	t.Parallel()
	prof := enginetest.TinyProfile(t)
	prof.HideCachedTokens = true
	_, url := enginetest.StartSim(t, sim.Config{Profile: prof, Seed: 1})
	res := runPlan(t, fmt.Sprintf(`
name: prefix-counters
target: {url: %s}
load: {concurrency: 2, duration: 2s, warmup: 200ms}
observe: {interval: 100ms}
workload: {input_tokens: "64", output_tokens: "4", shared_prefix: {tokens: 512, groups: 2}}
`, url))
	pr := res.Summary.PrefixReuse
	if pr == nil {
		t.Fatal("no prefix_reuse")
	}
	t.Logf("requested %.3f, achieved %.3f from %s, %d requests", pr.RequestedShare, pr.AchievedShare, pr.AchievedFrom, pr.Requests)
	if pr.CachedRequests != 0 || pr.AchievedFrom != "counters" {
		t.Fatalf("cached requests %d, achieved from %q: want 0 and the server's counters", pr.CachedRequests, pr.AchievedFrom)
	}
	if pr.AchievedShare > pr.RequestedShare+0.05 || pr.AchievedShare < pr.RequestedShare-0.1 {
		t.Errorf("the counters say the cache served %.3f where %.3f was asked", pr.AchievedShare, pr.RequestedShare)
	}
}
