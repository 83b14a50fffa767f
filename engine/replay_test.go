package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/workload"
)

// replaySource gives session s's k-th call the prompt "s/k", marked as
// turn k of its session's calls.
type replaySource struct{ calls []int }

func (replaySource) Spec(i uint64) workload.Spec { return workload.Spec{Index: i} }

func (r replaySource) Session(s uint64) workload.Session {
	return &replayStream{s: s, calls: r.calls[s]}
}

type replayStream struct {
	s        uint64
	k, calls int
}

func (r *replayStream) Reply(string, int) {}

func (r *replayStream) Next(i uint64) workload.Spec {
	spec := workload.Spec{Index: i, Class: "c", MaxTokens: 1, Prompt: fmt.Sprintf("%d/%d", r.s, r.k), Turn: r.k, Turns: r.calls}
	r.k++
	return spec
}

// affinityClient is serviceClient that notes, from bodies "prompt#index",
// each prompt's affinity and each request index's prompt.
type affinityClient struct {
	serviceClient
	mu       sync.Mutex
	affinity map[string]uint64
	prompt   map[string]string
}

func (c *affinityClient) Do(ctx context.Context, req *protocol.Request, t *protocol.Trace) {
	prompt, index, _ := strings.Cut(string(req.Body), "#")
	c.mu.Lock()
	c.affinity[prompt], c.prompt[index] = req.Affinity, prompt
	c.mu.Unlock()
	c.serviceClient.Do(ctx, req, t)
}

// replayWant is what one call's record should show: when it was due,
// its 1-based turn, and the affinity it was sent with.
type replayWant struct {
	dueMS    int64
	turn     int
	affinity uint64
}

// A replay sends each session's calls in order, each its delay after the
// reply before it ended (not at a fixed time), a subagent's first call
// its delay after its parent's call, a call that joins a subagent after
// its reply too, and every call of one task with the task's affinity.
// Session A: calls after delays 0, 100, 50 ms, call 2 joining C; B
// starts at 30 ms; C is A's subagent, 20 ms after A's call 1.
func TestReplaySessions(t *testing.T) {
	ms := time.Millisecond
	shape := Replay{Sessions: []ReplaySession{
		{Start: 0, Parent: -1, Delays: []time.Duration{0, 100 * ms, 50 * ms}, Joins: [][]int{nil, nil, {2}}, Group: 0},
		{Start: 30 * ms, Parent: -1, Delays: []time.Duration{0}, Group: 1},
		{Parent: 0, ParentCall: 1, Delays: []time.Duration{20 * ms}, Group: 0},
	}}
	tests := []struct {
		name     string
		service  time.Duration
		requests int
		want     map[string]replayWant
	}{
		// 200 ms calls: A0 0–200, A1 300–500; B0 30–230; C0 500+20 =
		// 520–720; A2 50 ms after the later of A1's and C0's ends: 770.
		{"slow", 200 * ms, 5, map[string]replayWant{
			"0/0": {0, 1, 1}, "0/1": {300, 2, 1}, "0/2": {770, 3, 1}, "1/0": {30, 1, 2}, "2/0": {520, 1, 1}}},
		// 50 ms calls: every later call moves with the replies (A1 at 150,
		// not 300), as recorded timestamps would not; C0 220–270, A2 320.
		{"fast", 50 * ms, 5, map[string]replayWant{
			"0/0": {0, 1, 1}, "0/1": {150, 2, 1}, "0/2": {320, 3, 1}, "1/0": {30, 1, 2}, "2/0": {220, 1, 1}}},
		// A budget of 2 requests (A0, B0) ends A before its call 1, so C,
		// waiting on that call, ends unsent: nothing hangs.
		{"budget", 200 * ms, 2, map[string]replayWant{"0/0": {0, 1, 1}, "1/0": {30, 1, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			simulated(t, func(t *testing.T) { checkReplay(t, shape, tt.service, tt.requests, tt.want) })
		})
	}
}

// checkReplay runs shape against a server of fixed service time and
// checks each record against want, keyed by prompt.
func checkReplay(t *testing.T, shape Replay, service time.Duration, requests int, want map[string]replayWant) {
	c := &affinityClient{serviceClient: serviceClient{service: service}, affinity: map[string]uint64{}, prompt: map[string]string{}}
	renderPrompt := func(s workload.Spec) (*protocol.Request, error) {
		body := fmt.Sprintf("%s#%d", s.Prompt, s.Index)
		return &protocol.Request{API: protocol.APIChat, Body: []byte(body), Stream: true, MaxTokens: 1}, nil
	}
	calls := []int{3, 1, 1}
	rs := collect(t, Config{Client: c, Source: replaySource{calls: calls}, Render: renderPrompt,
		Clock: TimerClock{}, Shape: shape, Requests: requests}, context.Background())
	if len(rs) != len(want) {
		t.Fatalf("%d records, want %d", len(rs), len(want))
	}
	sessionOf := map[string]uint64{}
	for _, r := range rs {
		prompt := c.prompt[fmt.Sprint(r.ID)]
		w, ok := want[prompt]
		if !ok {
			t.Fatalf("record %d: prompt %q", r.ID, prompt)
		}
		if !r.OpenLoop || r.IntendedUS != w.dueMS*1000 || r.SendUS != r.IntendedUS {
			t.Errorf("%s: intended %d µs, sent %d µs, want both %d ms", prompt, r.IntendedUS, r.SendUS, w.dueMS)
		}
		if r.Turn != w.turn || c.affinity[prompt] != w.affinity || r.SessionCalls != calls[prompt[0]-'0'] {
			t.Errorf("%s: turn %d affinity %d session calls %d, want %d %d %d", prompt, r.Turn, c.affinity[prompt], r.SessionCalls,
				w.turn, w.affinity, calls[prompt[0]-'0'])
		}
		sessionOf[prompt] = r.Session
	}
	// A session's records name the run index of its first call.
	if s, ok := sessionOf["0/1"]; ok && (s != sessionOf["0/0"] || sessionOf["2/0"] == s || sessionOf["1/0"] == s) {
		t.Errorf("sessions %v: want A's alike, B and C their own", sessionOf)
	}
}

func TestReplayValidate(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		name string
		s    []ReplaySession
		ok   bool
	}{
		// A root and its subagent after its only call.
		{"ok", []ReplaySession{{Parent: -1, Delays: []time.Duration{0}}, {Parent: 0, ParentCall: 0, Delays: []time.Duration{ms}}}, true},
		// No calls.
		{"empty", []ReplaySession{{Parent: -1}}, false},
		// Waiting on itself, or on a later session, could deadlock.
		{"self", []ReplaySession{{Parent: 0, Delays: []time.Duration{0}}}, false},
		// A parent call that does not exist.
		{"call", []ReplaySession{{Parent: -1, Delays: []time.Duration{0}}, {Parent: 0, ParentCall: 1, Delays: []time.Duration{0}}}, false},
		// A negative delay.
		{"negative", []ReplaySession{{Parent: -1, Delays: []time.Duration{0, -ms, 0}}}, false},
		// A later call joining the subagent an earlier call spawned.
		{"join", []ReplaySession{{Parent: -1, Delays: []time.Duration{0, 0}, Joins: [][]int{nil, {1}}},
			{Parent: 0, ParentCall: 0, Delays: []time.Duration{0}}}, true},
		// Joining a subagent spawned by that very call (or a later one)
		// would wait on a call that waits on it.
		{"join own", []ReplaySession{{Parent: -1, Delays: []time.Duration{0, 0}, Joins: [][]int{nil, {1}}},
			{Parent: 0, ParentCall: 1, Delays: []time.Duration{0}}}, false},
		// Joining a session that is not a subagent of it.
		{"join other", []ReplaySession{{Parent: -1, Delays: []time.Duration{0, 0}, Joins: [][]int{nil, {1}}},
			{Parent: -1, Delays: []time.Duration{0}}}, false},
		// Joins for more calls than the session has.
		{"joins", []ReplaySession{{Parent: -1, Delays: []time.Duration{0}, Joins: [][]int{nil, nil}}}, false},
	}
	for _, tt := range tests {
		if err := (Replay{Sessions: tt.s}).Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// A recorded task is a graph of requests: session A's calls in a line, its
// subagent C's first call after A's call 1, A's call 2 after both A's
// call 1 and C's last call (its join), each its recorded delay after them,
// in an order in which every node comes after those it waits for (C's
// call before A's call 2, though C is listed after A); B, another root,
// is a task of its own.
func TestReplayTaskGraph(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	r := Replay{Sessions: []ReplaySession{
		{Start: 0, Parent: -1, Delays: []time.Duration{0, 100 * ms, 50 * ms}, Joins: [][]int{nil, nil, {2}}},
		{Start: 30 * ms, Parent: -1, Delays: []time.Duration{0}},
		{Parent: 0, ParentCall: 1, Delays: []time.Duration{20 * ms}},
	}}
	tasks := r.tasks()
	if fmt.Sprint(tasks) != "[[0 2] [1]]" {
		t.Fatalf("tasks %v, want [[0 2] [1]]", tasks)
	}
	type node struct {
		stream int
		after  string
		delay  time.Duration
	}
	want := []node{{0, "[]", 0}, {0, "[0]", 100 * ms}, {1, "[1]", 20 * ms}, {0, "[1 2]", 50 * ms}}
	g := r.graph(tasks[0])
	if len(g.Nodes) != len(want) {
		t.Fatalf("%d nodes, want %d", len(g.Nodes), len(want))
	}
	for k, n := range g.Nodes {
		var delay time.Duration
		if n.Delay != nil {
			delay = n.Delay.Sample(nil)
		}
		if got := (node{n.Stream, fmt.Sprint(n.After), delay}); got != want[k] {
			t.Errorf("node %d: %+v, want %+v", k, got, want[k])
		}
	}
}

// A conversation is a line of turns, each a think time after the reply
// before it; one request is a line of one.
func TestConversationGraph(t *testing.T) {
	t.Parallel()
	for _, turns := range []int{0, 1, 4} {
		g := conversationGraph(turns, fixedThink(time.Second))
		if len(g.Nodes) != max(turns, 1) || g.calls != len(g.Nodes) {
			t.Fatalf("%d turns: %d nodes, %d calls", turns, len(g.Nodes), g.calls)
		}
		for k, n := range g.Nodes {
			if (k == 0) != (n.Delay == nil) || (k > 0) != (fmt.Sprint(n.After) == fmt.Sprint([]int{k - 1})) {
				t.Errorf("%d turns, node %d: after %v, delay %v", turns, k, n.After, n.Delay)
			}
		}
	}
}
