package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

// instantClient answers every call at once with one content event and
// usage, keeping the reply's text when asked (Request.KeepText), so a
// benchmark measures the client's own work and nothing else.
type instantClient struct{}

var instantText = []byte("a short reply")

func (instantClient) Do(_ context.Context, req *protocol.Request, t *protocol.Trace) {
	now := time.Now()
	t.Start, t.Sent, t.FirstToken, t.End = now, now, now, now
	t.Status, t.ContentEvents = 200, 1
	t.EventsUS = append(t.EventsUS, 0)
	t.UsageReported, t.PromptTokens, t.CompletionTokens = true, 16, 3
	if req.KeepText > 0 {
		t.Text = append(t.Text, instantText...)
	}
}

// benchRender renders a streamed chat body of the spec's prompt, as the
// runner's renderer does.
func benchRender(s workload.Spec) (*protocol.Request, error) {
	body, err := protocol.OpenAIBody{Model: "m", Prompt: s.Prompt, MaxTokens: s.MaxTokens, Stream: true, IncludeUsage: true}.Render(protocol.APIChat)
	return &protocol.Request{API: protocol.APIChat, Body: body, Stream: true, MaxTokens: s.MaxTokens, EventsCap: 8}, err
}

// benchCalls runs tasks closed-loop tasks (4 users) of class rag, a graph
// when g is set, through client and reports the cost per call.
func benchCalls(b *testing.B, client protocol.Client, g *Graph, callsPerTask int) {
	tasks := b.N
	cfg := Config{Client: client, Source: ragSource{}, Render: benchRender, Shape: ClosedLoop{Users: 4},
		Requests: tasks}
	if g != nil {
		cfg.Graphs = map[string]*Graph{"rag": g}
	} else {
		cfg.Requests = tasks * callsPerTask
	}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime()
	out := make(chan *record.Result, 1024)
	e, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = e.Run(context.Background(), out) }()
	for r := range out {
		if !r.OK() {
			b.Fatalf("failed: %s %s", r.Error, r.ErrorMsg)
		}
	}
	calls := float64(tasks * callsPerTask)
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/calls, "ns/call")
	// CPU time counts the work, not the waits for a core: on a shared
	// box it is the steadier figure.
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/calls, "cpu-ns/call")
}

// BenchmarkGraphCallCost: the client's cost per call of a graph workload
// against flat requests (wall and CPU time per call, the process's, GC
// included). flat sends 4 single requests per b.N; chain4 one 4-step
// chain (each call on the task's goroutine); fanout4 a plan, 2 parallel
// researchers and an answer (one copy on a goroutine of its own). Every
// reply is kept and appended to the next prompt. instant/ runs them on a
// client that answers at once: the engine's own work alone; http/
// against a 127.0.0.1 server streaming one token and usage (its CPU
// counted too, as on a load generator beside its target). Target: graph
// within 10% of flat (BENCHMARKS.md).
//
//	go test ./engine -run '^$' -bench GraphCallCost -benchtime 20000x -count 8
func BenchmarkGraphCallCost(b *testing.B) {
	model := func(name string, after ...int) Node {
		return Node{Name: name, After: after, Render: benchRender}
	}
	srv := httptest.NewServer(http.HandlerFunc(tinyStream))
	b.Cleanup(srv.Close)
	for _, cl := range []struct {
		name   string
		client func(b *testing.B) protocol.Client
	}{
		{"instant", func(*testing.B) protocol.Client { return instantClient{} }},
		{"http", func(b *testing.B) protocol.Client { return benchClient(b, srv.URL) }},
	} {
		b.Run(cl.name+"/flat", func(b *testing.B) { benchCalls(b, cl.client(b), nil, 4) })
		b.Run(cl.name+"/chain4", func(b *testing.B) {
			benchCalls(b, cl.client(b), (&Chain{Steps: []ChainStep{model("a"), model("b"), model("c"), model("d")}}).graph(), 4)
		})
		b.Run(cl.name+"/fanout4", func(b *testing.B) {
			research := model("research", 0)
			research.Count = 2
			benchCalls(b, cl.client(b), &Graph{Nodes: []Node{model("plan"), research, model("answer", 1)}}, 4)
		})
	}
}
