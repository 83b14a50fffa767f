package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

// turnsSource gives one user 3-turn conversations; the second
// conversation's second turn is marked to fail.
type turnsSource struct{}

func (turnsSource) Spec(i uint64) workload.Spec {
	return workload.Spec{Index: i, Class: "c", MaxTokens: 1}
}

func (turnsSource) Session(uint64) workload.Session { return &turnsSession{turns: 3} }

// singlesSource is turnsSource whose sessions send single requests.
type singlesSource struct{ turnsSource }

func (singlesSource) Session(uint64) workload.Session { return &turnsSession{} }

type turnsSession struct {
	n     int
	turns int // the conversations' length; 0 sends single requests
}

func (s *turnsSession) Reply(string, int) {}

func (s *turnsSession) Next(i uint64) workload.Spec {
	spec := workload.Spec{Index: i, Class: "c", MaxTokens: 1, Prompt: "ok"}
	if s.turns > 0 {
		spec.Turn, spec.Turns = s.n%s.turns, s.turns
	}
	if s.n == 4 {
		spec.Prompt = "fail"
	}
	s.n++
	return spec
}

// idClient answers request k (in order: one user) with the id "rk",
// failing those whose body says so, and notes the previous id each sent.
type idClient struct {
	mu   sync.Mutex
	sent []string
}

func (c *idClient) Do(_ context.Context, req *protocol.Request, t *protocol.Trace) {
	prev, prompt, _ := strings.Cut(string(req.Body), "|")
	c.mu.Lock()
	c.sent = append(c.sent, prev)
	t.ResponseID = fmt.Sprintf("r%d", len(c.sent))
	c.mu.Unlock()
	t.Status = 200
	if prompt == "fail" {
		t.Status, t.Err, t.ErrMsg = 500, record.ErrHTTP5xx, "HTTP 500"
	}
}

// A closed-loop user's later turns carry the id of the user's previous
// reply; a first turn carries none, nor does the turn after a failed one
// (the history is sent again rather than continued from a failed reply).
func TestPreviousResponseIDThreading(t *testing.T) {
	t.Parallel()
	c := &idClient{}
	renderPrev := func(s workload.Spec) (*protocol.Request, error) {
		return &protocol.Request{API: protocol.APIResponses, Body: []byte(s.PreviousResponseID + "|" + s.Prompt), MaxTokens: 1}, nil
	}
	rs := collect(t, Config{Client: c, Source: turnsSource{}, Render: renderPrev, Clock: TimerClock{},
		Shape: ClosedLoop{Users: 1}, Requests: 6}, context.Background())
	if len(rs) != 6 {
		t.Fatalf("%d records, want 6", len(rs))
	}
	want := []string{"", "r1", "r2", "", "r4", ""}
	if fmt.Sprint(c.sent) != fmt.Sprint(want) {
		t.Errorf("previous ids sent %q, want %q", c.sent, want)
	}
	for _, r := range rs {
		if r.ResponseID != fmt.Sprintf("r%d", r.ID+1) {
			t.Errorf("record %d: response_id %q", r.ID, r.ResponseID)
		}
	}
}

// Each record of a conversation carries its 1-based turn and its
// session, the ID of the conversation's first turn; a single request
// carries neither, even when it comes from a user's session.
func TestRecordsCarryConversation(t *testing.T) {
	t.Parallel()
	render := func(s workload.Spec) (*protocol.Request, error) {
		return &protocol.Request{Body: []byte("|" + s.Prompt), MaxTokens: 1}, nil
	}
	for _, tc := range []struct {
		name     string
		src      Source
		turns    string
		sessions string
	}{
		// One user, two 3-turn conversations, started by requests 0 and 3.
		{"conversations", turnsSource{}, "[1 2 3 1 2 3]", "[0 0 0 3 3 3]"},
		// Single requests: no turn, no session.
		{"singles", singlesSource{}, "[0 0 0 0 0 0]", "[0 0 0 0 0 0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rs := collect(t, Config{Client: &idClient{}, Source: tc.src, Render: render, Clock: TimerClock{},
				Shape: ClosedLoop{Users: 1}, Requests: 6}, context.Background())
			turns, sessions := make([]int, len(rs)), make([]uint64, len(rs))
			for _, r := range rs {
				turns[r.ID], sessions[r.ID] = r.Turn, r.Session
			}
			if fmt.Sprint(turns) != tc.turns || fmt.Sprint(sessions) != tc.sessions {
				t.Errorf("turns %v sessions %v, want %s %s", turns, sessions, tc.turns, tc.sessions)
			}
		})
	}
}
