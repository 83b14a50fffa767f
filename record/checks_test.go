package record

import "testing"

// TestTokenChecksCauses: each cause of a prompt-length gap is told apart
// on records whose cause is known by construction, per class, with the
// bad-input class left out.
func TestTokenChecksCauses(t *testing.T) {
	t.Parallel()
	rec := func(class string, server, client int) *Result {
		return &Result{Class: class, Stream: true, TTFTUS: 1000, E2EUS: 2000, EventsUS: []int64{1000},
			OutputTokens: 4, MaxTokens: 4, TokenSource: TokensUsage, InputTokens: server, PromptTokensSent: client}
	}
	a := NewAggregate()
	for i := range 30 {
		c := 20 + 10*i
		a.Add(rec("chat", c+10, c))                           // Llama-3's chat template: +10 whatever the length
		a.Add(rec("docs", min(4096, 3000+100*i), 3000+100*i)) // context 4096: the longer ones cut
		a.Add(rec("mismatch", c+c/5, c))                      // a tokenizer 20% off
		a.Add(rec("exact", c, c))                             // the exact tokenizer, completions without BOS
		a.Add(rec("fixed", 560, 512))                         // one length, 48 more: cannot be a template
		vision := rec("vision", c+2125, c)                    // a 1080p image's tokens: the server's to count
		vision.Images, vision.ImageSize = 1, "1920x1080"
		a.Add(vision)
		bad := rec("bad_input", 9000, 1)
		bad.Expect = ExpectRejection
		a.Add(bad)
	}
	s := a.Summary(RunInfo{EndUS: 10e6})
	want := map[string]string{"chat": CauseTemplate, "docs": CauseTruncated, "mismatch": CauseTokenizer,
		"exact": CauseMatch, "fixed": CauseTokenizer}
	for class, cause := range want {
		ck := s.Classes[class].Checks
		if ck == nil || ck.InputTokensCause != cause {
			t.Errorf("class %s: checks %+v, want cause %s", class, ck, cause)
		}
	}
	if ck := s.Classes["chat"].Checks; ck.InputTokensOffset != 10 {
		t.Errorf("chat offset %v, want +10", ck.InputTokensOffset)
	}
	// 3000..5900 by 100: 4100 and above are cut, 4400 and above by more
	// than 5% (16 prompts), at the ceiling 4096.
	if ck := s.Classes["docs"].Checks; ck.InputTokensTruncatedTo != 4096 || ck.InputTokensLongest != 5900 || ck.InputTokensTruncated != 16 {
		t.Errorf("docs truncation %+v, want 16 prompts cut to 4096 of up to 5900", ck)
	}
	if ck := s.Classes["bad_input"].Checks; ck != nil {
		t.Errorf("bad_input checks %+v, want none", ck)
	}
	if s.Checks.InputTokensCompared != 150 {
		t.Errorf("run compared %d prompts, want 150 (bad input and image requests left out)", s.Checks.InputTokensCompared)
	}
}
