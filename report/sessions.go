package report

import (
	"bytes"
	"cmp"
	"fmt"

	"github.com/inferload/inferload/record"
)

// This file: the Sessions section of the terminal summary and of
// report.html, one block per conversational class (summary.json's
// sessions, docs/summary.md#sessions-multi-turn-conversations).

// sessionCounts is a class's conversations and session goodput in one line.
// A replayed trace's sessions (Turns 0) vary in length.
func sessionCounts(name string, c *record.SessionSummary) string {
	turns := fmt.Sprintf("%d turns", c.Turns)
	if c.Turns == 0 {
		turns = "recorded sessions"
	}
	return fmt.Sprintf("%s (%s): %d completed, %d failed, %d incomplete; goodput %.2f sessions/s (%d met, %.1f %%)",
		name, turns, c.Completed, c.Failed, c.Incomplete, c.Goodput.SessionsPerS, c.Goodput.Met, 100*c.Goodput.Attainment)
}

// sessionPerSession is a class's time to finish and what one conversation
// cost, in one line; fmtMS formats milliseconds for the medium.
func sessionPerSession(c *record.SessionSummary, fmtMS func(float64) string) string {
	d := c.Duration
	return fmt.Sprintf("time to finish p50 %s  p90 %s  p99 %s  p99.9 %s ms (%s backed); per session %.1f calls, %.0f input and %.0f output tokens",
		fmtMS(d.P50), fmtMS(d.P90), fmtMS(d.P99), fmtMS(d.P999), cmp.Or(c.DurationBacked, "none"),
		c.CallsPerSession, c.InputTokensPerSession, c.OutputTokensPerSession)
}

// writeSessions shows each conversational class: its conversations, their
// time to finish and cost, and TTFT per turn against the prompt's length.
func writeSessions(b *bytes.Buffer, s *record.Summary) {
	for _, name := range record.SessionClasses(s.Sessions) {
		c := s.Sessions[name]
		fmt.Fprintf(b, "\nSessions %s\n  %s\n", sessionCounts(name, c), sessionPerSession(c, formatMS))
		fmt.Fprintf(b, "  %-6s %9s %12s %12s %12s\n", "turn", "requests", "input tok", "TTFT p50 ms", "TTFT p90 ms")
		for _, t := range c.PerTurn {
			fmt.Fprintf(b, "  %-6d %9d %12.1f %12s %12s\n", t.Turn, t.Requests, t.InputTokensMean, formatMS(t.TTFTP50), formatMS(t.TTFTP90))
		}
	}
}

// sessionSection is report.html's Sessions section; nil without
// conversations.
func sessionSection(in *HTMLInput) *section {
	sessions := in.Summary.Sessions
	if len(sessions) == 0 {
		return nil
	}
	sec := &section{ID: "sessions", Title: "Sessions",
		Help: "Multi-turn conversations as wholes: completed, failed, and cut by the run's end; the time to finish one (first turn's send to last turn's end); session goodput counts the conversations in which every call met the SLO. Per turn, TTFT against the prompt the turn carries."}
	for _, name := range record.SessionClasses(sessions) {
		c := sessions[name]
		t := table{Caption: sessionCounts(name, c) + ". " + sessionPerSession(c, ms),
			Head: []string{"turn", "requests", "mean input tokens", "TTFT p50 ms", "TTFT p90 ms"}}
		for _, tf := range c.PerTurn {
			t.Rows = append(t.Rows, []string{fmt.Sprint(tf.Turn), fmt.Sprint(tf.Requests),
				fmt.Sprintf("%.1f", tf.InputTokensMean), ms(tf.TTFTP50), ms(tf.TTFTP90)})
		}
		sec.Tables = append(sec.Tables, t)
	}
	return sec
}
