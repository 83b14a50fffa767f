package workload

import (
	"math"
	"reflect"
	"testing"
)

// convMix has a 3-turn chat class beside a single-request class of the
// same weight, and 5% bad input.
func convMix(t testing.TB, bad float64) *Mix {
	return mustMix(t, MixConfig{Seed: 11, BadInput: BadInputConfig{Fraction: bad, MaxContext: 4096}, Classes: []ClassConfig{
		{Name: "chat", Weight: 1, Input: Fixed(20), Output: Fixed(10), Turns: 3},
		{Name: "single", Weight: 1, Input: Fixed(30), Output: Fixed(5)},
	}})
}

func TestConversationHistoryGrows(t *testing.T) {
	t.Parallel()
	m := convMix(t, 0)
	tok, err := LoadTokenizer(Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	sess := m.Session(3)
	var prev Spec
	turns := 0
	for i := range uint64(60) {
		s := sess.Next(i)
		if s.Index != i {
			t.Fatalf("index %d, want %d", s.Index, i)
		}
		// Turns tells a conversation's turns from single requests.
		if want := map[string]int{"chat": 3}[s.Class]; s.Turns != want {
			t.Fatalf("class %s: Turns %d, want %d", s.Class, s.Turns, want)
		}
		if s.Class != "chat" {
			continue
		}
		turns++
		// Turn k carries 2k earlier messages (user, assistant) and the new one.
		if len(s.Messages) != 2*s.Turn+1 || s.Messages[len(s.Messages)-1].Role != "user" {
			t.Fatalf("turn %d: %d messages", s.Turn, len(s.Messages))
		}
		// The history is the previous turn's conversation, unchanged.
		if s.Turn > 0 && !reflect.DeepEqual(s.Messages[:len(prev.Messages)], prev.Messages) {
			t.Fatalf("turn %d does not extend turn %d", s.Turn, prev.Turn)
		}
		// The assistant turns are exactly the asked output length, so
		// InputTokens is exact for the conversation's contents.
		if got := countMessages(tok, s.Messages); got != s.InputTokens || s.InputTokens != 20+30*s.Turn {
			t.Fatalf("turn %d: InputTokens %d, counted %d, want %d", s.Turn, s.InputTokens, got, 20+30*s.Turn)
		}
		// A later turn is built to reuse the previous turn's whole prompt
		// (its synthetic reply the server did not write, it cannot).
		if want := max(20+30*(s.Turn-1), 0) * min(s.Turn, 1); s.ReuseTokens != want {
			t.Fatalf("turn %d: ReuseTokens %d, want %d", s.Turn, s.ReuseTokens, want)
		}
		prev = s
	}
	if turns < 10 {
		t.Fatalf("only %d chat turns in 60 requests", turns)
	}
}

func countMessages(tok Tokenizer, ms []ChatMessage) int {
	n := 0
	for _, m := range ms {
		n += tok.Count(m.Content)
	}
	return n
}

func TestConversationDeterminism(t *testing.T) {
	t.Parallel()
	a, b := convMix(t, 0.05), convMix(t, 0.05)
	tests := []struct {
		name         string
		userA, userB uint64
		offset       uint64 // added to B's request numbers
		same         bool
	}{
		// Same user, same numbers: identical requests.
		{"same user", 4, 4, 0, true},
		// Same user, other numbers (other timing): identical content.
		{"other timing", 4, 4, 1000, true},
		// Another user has its own conversations.
		{"other user", 4, 5, 0, false},
	}
	for _, tc := range tests {
		sa, sb := a.Session(tc.userA), b.Session(tc.userB)
		same := true
		for i := range uint64(40) {
			x, y := sa.Next(i), sb.Next(i+tc.offset)
			y.Index = x.Index
			same = same && reflect.DeepEqual(x, y)
		}
		if same != tc.same {
			t.Errorf("%s: same %v, want %v", tc.name, same, tc.same)
		}
	}
}

func TestConversationClassShares(t *testing.T) {
	t.Parallel()
	m := convMix(t, 0.05)
	counts := map[string]int{}
	const users, each = 200, 60
	for u := range uint64(users) {
		s := m.Session(u)
		for i := range uint64(each) {
			counts[s.Next(i).Class]++
		}
	}
	// Weights stay shares of requests although chat draws once per 3 turns:
	// expect 47.5% each and 5% bad input (of conversations, so a bit less
	// of requests). 12,000 requests: allow 3 points.
	n := float64(users * each)
	for class, want := range map[string]float64{"chat": 0.49, "single": 0.49} {
		if got := float64(counts[class]) / n; math.Abs(got-want) > 0.03 {
			t.Errorf("%s: share %.3f, want about %.3f (%v)", class, got, want, counts)
		}
	}
	if counts[BadInputClass] == 0 {
		t.Errorf("no bad input: %v", counts)
	}
}

func TestSessionOnlyWithConversations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		turns int
		want  bool
	}{
		// No class has turns: no sessions, requests stay Spec(i).
		{"none", 0, false},
		// One turn is a single request too.
		{"one", 1, false},
		// Two turns need sessions.
		{"two", 2, true},
	}
	for _, tc := range tests {
		m := mustMix(t, MixConfig{Seed: 1, Classes: []ClassConfig{{Name: "c", Weight: 1, Input: Fixed(5), Output: Fixed(5), Turns: tc.turns}}})
		if got := m.Session(0) != nil; got != tc.want {
			t.Errorf("%s: session %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestConversationTurnsChecked(t *testing.T) {
	t.Parallel()
	for _, turns := range []int{-1, MaxTurns + 1} { // out of range either way
		_, err := NewMix(MixConfig{Seed: 1, Classes: []ClassConfig{{Name: "c", Weight: 1, Input: Fixed(5), Output: Fixed(5), Turns: turns}}})
		if err == nil {
			t.Errorf("turns %d accepted", turns)
		}
	}
}
