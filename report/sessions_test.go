package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// sessionsSummary is a run of 3-turn conversations, figures planted.
var sessionsSummary = &record.Summary{Sessions: map[string]*record.SessionSummary{"chat<b>": {
	Turns: 3, Completed: 17, Failed: 1, Incomplete: 2, CallsPerSession: 3, InputTokensPerSession: 216, OutputTokensPerSession: 12,
	Duration: record.Stats{Count: 17, P50: 16.9, P90: 20, P99: 25, P999: 25}, DurationBacked: "p50",
	Goodput: record.SessionGoodput{Met: 15, Attainment: 15.0 / 18, SessionsPerS: 0.5},
	PerTurn: []record.TurnFigures{{Turn: 1, Requests: 20, InputTokensMean: 32, TTFTP50: 4.5, TTFTP90: 6},
		{Turn: 2, Requests: 19, InputTokensMean: 72, TTFTP50: 5.5, TTFTP90: 7}}}}}

// TestSessionsShown: the terminal summary and report.html show a Sessions
// block per conversational class, with its counts, time to finish and
// per-turn rows, and nothing of the kind without conversations.
func TestSessionsShown(t *testing.T) {
	t.Parallel()
	render := map[string]func(*bytes.Buffer, *record.Summary) error{
		"terminal": func(b *bytes.Buffer, s *record.Summary) error { return WriteSummary(b, s) },
		"html": func(b *bytes.Buffer, s *record.Summary) error {
			return WriteHTML(b, &HTMLInput{Summary: s, Digest: NewDigest()})
		},
	}
	for medium, write := range render {
		var b bytes.Buffer
		if err := write(&b, sessionsSummary); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		for _, want := range []string{"Sessions", "(3 turns): 17 completed, 1 failed, 2 incomplete; goodput 0.50 sessions/s (15 met, 83.3 %)",
			"time to finish p50 16.9", "(p50 backed); per session 3.0 calls, 216 input and 12 output tokens"} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: lacks %q", medium, want)
			}
		}
		if medium == "html" && strings.Contains(page, "chat<b>") {
			t.Errorf("html: a class name reached the page unescaped")
		}
		b.Reset()
		if err := write(&b, &record.Summary{}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "time to finish") {
			t.Errorf("%s: a run without conversations shows sessions", medium)
		}
	}
}

// TestSessionCountsRecorded: a replayed trace's sessions (turns 0, their
// length varies) are named so, not "0 turns".
func TestSessionCountsRecorded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		turns int
		want  string
	}{
		{3, "chat (3 turns): 1 completed"},
		{0, "chat (recorded sessions): 1 completed"},
	} {
		if got := sessionCounts("chat", &record.SessionSummary{Turns: tc.turns, Completed: 1}); !strings.HasPrefix(got, tc.want) {
			t.Errorf("turns %d: %q, want it to open with %q", tc.turns, got, tc.want)
		}
	}
}
