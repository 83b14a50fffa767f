package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/workload"
)

// agentServer is a 127.0.0.1 chat server whose replies are a function of
// the request alone: "reply of MODEL to N bytes". Requests for model
// "research" wait until fanOut of them are in flight (or a deadline), so
// a fan-out whose copies do not overlap fails; model "fail" gets a 500.
type agentServer struct {
	fanOut int
	mu     sync.Mutex
	bodies []string
	asked  map[string][]string // model -> prompts
	here   int
	all    chan struct{}
}

func startAgentServer(t *testing.T, fanOut int) (*agentServer, *protocol.OpenAI) {
	t.Helper()
	s := &agentServer{fanOut: fanOut, asked: map[string][]string{}, all: make(chan struct{})}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, openAIClient(t, srv.URL+"/v1")
}

func (s *agentServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(b, &req) != nil || len(req.Messages) == 0 {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	prompt := req.Messages[len(req.Messages)-1].Content
	s.mu.Lock()
	s.bodies = append(s.bodies, string(b))
	s.asked[req.Model] = append(s.asked[req.Model], prompt)
	if req.Model == "research" {
		if s.here++; s.here == s.fanOut {
			close(s.all)
		}
	}
	s.mu.Unlock()
	switch req.Model {
	case "fail":
		http.Error(w, "down", http.StatusInternalServerError)
		return
	case "research":
		select {
		case <-s.all:
		case <-time.After(10 * time.Second): // a deadline, not a synchronisation
			http.Error(w, "the fan-out's copies never overlapped", http.StatusServiceUnavailable)
			return
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	text := fmt.Sprintf("reply of %s to %d bytes", req.Model, len(prompt))
	_, _ = fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\ndata: [DONE]\n\n", text)
}

func (s *agentServer) prompts(model string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.asked[model])
}

// modelNode is a chat node sending the spec's prompt to model name.
func modelNode(name string, after ...int) Node {
	return Node{Name: name, After: after, Render: func(s workload.Spec) (*protocol.Request, error) {
		body, err := protocol.OpenAIBody{Model: name, Prompt: s.Prompt, MaxTokens: s.MaxTokens, Stream: true}.Render(protocol.APIChat)
		return &protocol.Request{API: protocol.APIChat, Body: body, Stream: true, MaxTokens: s.MaxTokens, EventsCap: 8}, err
	}}
}

// researchGraph: plan, then 3 researchers beside a 1ms search tool, then
// an answer after both.
func researchGraph() *Graph {
	research := modelNode("research", 0)
	research.Count = 3
	lat, _ := schedule.ParseThinkTime("1ms")
	search := Node{Name: "search", After: []int{0}, Tool: &Tool{Latency: lat, ResultTokens: 5}}
	return &Graph{Nodes: []Node{modelNode("plan"), research, search, modelNode("answer", 1, 2)}}
}

// runGraph runs n tasks of g one after another and returns their records.
func runGraph(t *testing.T, c protocol.Client, g *Graph, n int) []*record.Result {
	t.Helper()
	return collect(t, Config{Client: c, Source: ragSource{}, Render: render, Shape: ClosedLoop{Users: 1},
		Requests: n, Graphs: map[string]*Graph{"rag": g}, Seed: 7}, context.Background())
}

func stepNames(steps []record.ChainStep) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Name)
	}
	return out
}

// TestGraphFanOutFanIn: the researchers run at once (the server holds
// each until all three are in), the answer waits for all of them and the
// tool, the plan's real reply reaches each researcher's prompt and every
// researcher's reply and the tool's text reach the answer's, and the task
// is one record timed from the plan's send to the answer's end.
func TestGraphFanOutFanIn(t *testing.T) {
	t.Parallel()
	srv, c := startAgentServer(t, 3)
	rs := runGraph(t, c, researchGraph(), 1)
	if len(rs) != 1 || !rs[0].OK() {
		t.Fatalf("records %+v", rs)
	}
	r := rs[0]
	want := []string{"plan", "research#1", "research#2", "research#3", "search", "answer"}
	if got := stepNames(r.Chain); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	plan, answer := r.Chain[0], r.Chain[5]
	for _, s := range r.Chain[1:5] {
		if s.SendUS < plan.SendUS+plan.DurUS {
			t.Errorf("%s sent at %d, before the plan ended at %d", s.Name, s.SendUS, plan.SendUS+plan.DurUS)
		}
		if end := s.SendUS + s.DurUS; answer.SendUS < end {
			t.Errorf("answer sent at %d, before %s ended at %d", answer.SendUS, s.Name, end)
		}
	}
	if tool := r.Chain[4]; tool.Kind != StepKindTool || tool.DurUS < 1000 {
		t.Errorf("tool step %+v: want kind tool, at least 1ms", tool)
	}
	for _, p := range srv.prompts("research") {
		if !strings.Contains(p, "what is a knee\n\nreply of plan to 14 bytes") {
			t.Errorf("research prompt %q lacks the plan's reply", p)
		}
	}
	answers := srv.prompts("answer")
	if len(answers) != 1 || strings.Count(answers[0], "reply of research") != 3 ||
		len(strings.Fields(answers[0][strings.LastIndex(answers[0], "\n\n"):])) < 5 {
		t.Errorf("answer prompt %q: want 3 research replies, then the tool's text", answers)
	}
	if r.SendUS != plan.SendUS || r.SendUS+r.E2EUS < answer.SendUS+answer.DurUS-1 || r.TTFTUS < answer.SendUS-r.SendUS {
		t.Errorf("record send %d e2e %d ttft %d for steps %+v", r.SendUS, r.E2EUS, r.TTFTUS, r.Chain)
	}
}

// TestGraphSameSeedSameBodies: two runs of the same tasks send the same
// bodies (the tool's text is drawn from the seed, the replies are the
// server's own).
func TestGraphSameSeedSameBodies(t *testing.T) {
	t.Parallel()
	var runs [2][]string
	for k := range runs {
		srv, c := startAgentServer(t, 3)
		g := researchGraph()
		g.Nodes[1].Count = 1 // one researcher: the barrier holds a fan-out per task only once
		srv.fanOut = 1
		for _, r := range runGraph(t, c, g, 3) {
			if !r.OK() {
				t.Fatalf("run %d: %s %s", k, r.Error, r.ErrorMsg)
			}
		}
		srv.mu.Lock()
		runs[k] = slices.Sorted(slices.Values(srv.bodies))
		srv.mu.Unlock()
	}
	if len(runs[0]) != 9 || !slices.Equal(runs[0], runs[1]) {
		t.Errorf("bodies differ:\n%q\n%q", runs[0], runs[1])
	}
}

// TestGraphFailedNode: a failing root fails the task with its error; its
// sibling finishes, and the node after both is never sent.
func TestGraphFailedNode(t *testing.T) {
	t.Parallel()
	srv, c := startAgentServer(t, 1)
	g := &Graph{Nodes: []Node{modelNode("fail"), modelNode("plan"), modelNode("answer", 0, 1)}}
	rs := runGraph(t, c, g, 1)
	r := rs[0]
	if r.Error != record.ErrHTTP5xx || !strings.Contains(r.ErrorMsg, "chain step 1 (fail)") {
		t.Fatalf("record error %s %q", r.Error, r.ErrorMsg)
	}
	if got := stepNames(r.Chain); !slices.Equal(got, []string{"fail", "plan"}) || len(srv.prompts("answer")) != 0 {
		t.Errorf("steps %v, answer asked %d times", got, len(srv.prompts("answer")))
	}
}

// TestGraphToolLatencyOnRunClock: on simulated time, a mocked tool takes
// exactly its latency, and the call after it starts when it ends.
func TestGraphToolLatencyOnRunClock(t *testing.T) {
	simulated(t, func(t *testing.T) {
		lat, _ := schedule.ParseThinkTime("2s")
		g := &Graph{Nodes: []Node{{Name: "plan", Render: render}, {Name: "tool", After: []int{0}, Tool: &Tool{Latency: lat}},
			{Name: "answer", After: []int{1}, Render: render}}}
		rs := collect(t, Config{Client: &serviceClient{service: 100 * time.Millisecond}, Source: fixedSource{}, Render: render,
			Shape: ClosedLoop{Users: 1}, Requests: 1, Graphs: map[string]*Graph{"default": g}, Clock: TimerClock{}}, context.Background())
		r := rs[0]
		if !r.OK() || len(r.Chain) != 3 {
			t.Fatalf("record %+v", r)
		}
		tool, answer := r.Chain[1], r.Chain[2]
		if tool.DurUS != 2_000_000 || answer.SendUS != tool.SendUS+tool.DurUS || r.E2EUS != 2_200_000 {
			t.Errorf("tool %+v answer %+v e2e %d: want the tool 2s, the answer after it, 2.2s in all", tool, answer, r.E2EUS)
		}
	})
}

// TestGraphConfigRejected: a graph's nodes must be one kind of call each,
// after earlier nodes, within the call bound; a chain is checked as the
// graph it runs as, and must have steps.
func TestGraphConfigRejected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		chains map[string]*Chain
		graphs map[string]*Graph
		want   string
	}{
		// No nodes.
		{nil, map[string]*Graph{"a": {}}, "no nodes"},
		// A node with nothing to call.
		{nil, map[string]*Graph{"a": {Nodes: []Node{{Name: "x"}}}}, "exactly one of Render, HTTP or Tool"},
		// An edge to a later node (not topological, or a cycle).
		{nil, map[string]*Graph{"a": {Nodes: []Node{{Name: "x", Render: render, After: []int{1}}, {Name: "y", Render: render}}}}, "after 2 is not an earlier node"},
		// Too many calls.
		{nil, map[string]*Graph{"a": {Nodes: []Node{{Name: "x", Render: render, Count: 65}}}}, "65 calls per task"},
		// A nil graph.
		{nil, map[string]*Graph{"a": nil}, "nil"},
		// A chain with no steps does nothing.
		{map[string]*Chain{"a": {}}, nil, "no steps"},
		// A step with neither a renderer nor an HTTP call.
		{map[string]*Chain{"a": {Steps: []ChainStep{{Name: "x"}}}}, nil, "exactly one"},
		// A nil chain.
		{map[string]*Chain{"a": nil}, nil, "nil"},
	}
	for _, tt := range tests {
		cfg := ragConfig()
		cfg.Chains, cfg.Graphs = tt.chains, tt.graphs
		wantRejected(t, cfg, tt.want)
	}
}

// cutClient answers at once; a reply the engine keeps for a later call
// (KeepText) comes back cut, as one longer than MaxReplyKept does.
type cutClient struct{ serviceClient }

func (c *cutClient) Do(ctx context.Context, req *protocol.Request, t *protocol.Trace) {
	c.serviceClient.Do(ctx, req, t)
	if req.KeepText > 0 {
		t.Text, t.TextCut = []byte("kept part"), true
	}
}

// A call whose reply was too long to pass on whole says so on its step
// and on the task's record, and the summary counts it on its node; the
// call whose reply no one reads is never marked.
func TestGraphReplyCut(t *testing.T) {
	t.Parallel()
	g := &Graph{Nodes: []Node{modelNode("plan"), modelNode("answer", 0)}}
	rs := runGraph(t, &cutClient{}, g, 2)
	if len(rs) != 2 {
		t.Fatalf("%d records, want 2", len(rs))
	}
	for _, r := range rs {
		if len(r.Chain) != 2 || !r.Chain[0].ReplyCut || r.Chain[1].ReplyCut || !r.ReplyCut {
			t.Fatalf("record %d: steps %+v, reply_cut %v: want plan's cut, answer's not, the task's set", r.ID, r.Chain, r.ReplyCut)
		}
	}
	agg := record.NewAggregate()
	for _, r := range rs {
		agg.Add(r)
	}
	steps := agg.Summary(record.RunInfo{}).Chains["rag"].Steps
	if steps[0].RepliesCut != 2 || steps[1].RepliesCut != 0 {
		t.Errorf("replies cut per node %d, %d: want 2, 0", steps[0].RepliesCut, steps[1].RepliesCut)
	}
}
