package workload

import (
	"testing"
)

// TestConversationThreadsReplies: a reply handed to Reply becomes the
// next turn's assistant message, its tokens count in the next turn's
// prompt and as reusable; without one (a failed turn, a cut reply) or
// for a class with SyntheticHistory the synthetic text stays.
func TestConversationThreadsReplies(t *testing.T) {
	t.Parallel()
	const reply = "The answer is forty-two." // 6 tokens in cl100k_base
	tok, err := LoadTokenizer(Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	n := tok.Count(reply)
	tests := []struct {
		name      string
		synthetic bool
		hand      bool // hand the first turn's reply in
		outTokens int  // as the server reported it; 0: not reported
		keep      bool // the first turn asks for its reply
		threaded  bool // the second turn carries the reply
		histTok   int  // the reply's tokens in the second turn's prompt
	}{
		// The server's count is trusted as the reply's length.
		{"replies, usage reported", false, true, 9, true, true, 9},
		// Without usage the class's tokenizer counts the text.
		{"replies, counted", false, true, 0, true, true, n},
		// A failed turn (or a cut reply) is never handed in: the
		// synthetic reply of the asked 10 tokens stays, and is not
		// reusable (the server never wrote it).
		{"replies, none handed", false, false, 0, true, false, 10},
		// A synthetic-history class neither asks nor listens.
		{"synthetic", true, true, 9, false, false, 10},
	}
	for _, tc := range tests {
		m := mustMix(t, MixConfig{Seed: 5, Classes: []ClassConfig{
			{Name: "chat", Weight: 1, Input: Fixed(20), Output: Fixed(10), Turns: 2, SyntheticHistory: tc.synthetic}}})
		s := m.Session(0)
		first := s.Next(0)
		if first.KeepReply != tc.keep {
			t.Errorf("%s: first turn KeepReply %v, want %v", tc.name, first.KeepReply, tc.keep)
		}
		if tc.hand {
			s.Reply(reply, tc.outTokens)
		}
		second := s.Next(1)
		if second.KeepReply {
			t.Errorf("%s: the last turn asks for its reply", tc.name)
		}
		got := second.Messages[1].Content
		if (got == reply) != tc.threaded {
			t.Errorf("%s: assistant message %q, threaded want %v", tc.name, clip(got), tc.threaded)
		}
		if want := 20 + tc.histTok + 20; second.InputTokens != want {
			t.Errorf("%s: second turn InputTokens %d, want %d", tc.name, second.InputTokens, want)
		}
		wantReuse := 20
		if tc.threaded {
			wantReuse += tc.histTok
		}
		if second.ReuseTokens != wantReuse {
			t.Errorf("%s: second turn ReuseTokens %d, want %d", tc.name, second.ReuseTokens, wantReuse)
		}
	}
}

// A reply handed in after the last turn, or twice, changes nothing: the
// session listens only while a turn's reply is awaited.
func TestConversationReplyOnlyWhenAwaited(t *testing.T) {
	t.Parallel()
	m := mustMix(t, MixConfig{Seed: 5, Classes: []ClassConfig{{Name: "chat", Weight: 1, Input: Fixed(20), Output: Fixed(10), Turns: 2}}})
	a, b := m.Session(0), m.Session(0)
	a.Next(0)
	b.Next(0)
	a.Reply("first", 3)
	b.Reply("first", 3)
	b.Reply("second", 4) // not awaited: ignored
	x, y := a.Next(1), b.Next(1)
	if x.Messages[1].Content != y.Messages[1].Content || x.InputTokens != y.InputTokens {
		t.Fatalf("a second Reply changed the history: %q/%d vs %q/%d", x.Messages[1].Content, x.InputTokens, y.Messages[1].Content, y.InputTokens)
	}
}
