package engine

import (
	"context"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

// callState is how far one call of a task got.
type callState uint8

const (
	callNotRun  callState = iota // a node before it failed
	callRan                      // sent (or failed to render)
	callSkipped                  // an on_tool_call tool no reply asked for
)

// graphCall is one call of a running task.
type graphCall struct {
	node  int
	state callState
	spec  workload.Spec // what it was built from
	req   *protocol.Request
	tr    protocol.Trace
	// text is what it passes to the nodes after it.
	text string
	// end is when a request call's reply ended (a graph of requests: the
	// calls after it are due from it); zero when it was never sent.
	end time.Time
	// toolCalls is set when a model reply asked for a function call;
	// calls are those calls as the reply gave them (ids, names,
	// arguments), nil when they could not be kept.
	toolCalls bool
	calls     []protocol.ReplyToolCall
}

// graphRun is one task of a graph class as its calls run.
type graphRun struct {
	g     *graphPlan
	i     uint64
	spec  workload.Spec
	calls []graphCall
	// trace is the task's join key (zero with trace context off): every
	// call sends it, each as its own span (the call's index in place of
	// the attempt number), so a server's spans of the task share it.
	trace [16]byte
	// requests, when set, makes the graph one of requests
	// (graph_requests.go): each call is a request of its own, with its
	// own record, and the task yields none.
	requests *requestTask
}

// graphTask tracks which nodes may start.
type graphTask struct {
	run      *graphRun
	waiting  []int // per node: nodes after it still to finish
	left     []int // per node: calls still running
	ready    []int // nodes whose upstream all finished, not yet started
	inFlight int
	failed   bool
	done     chan int // finished calls run on goroutines; nil until one is
}

// executeGraph runs graph g for task i and folds its calls into one
// record: the task's latency runs from the usual origin to the end of its
// last call, its TTFT to the first token of that call, and the failing
// call's error, if any, is the record's. A call starts once every node it
// comes after succeeded; the copies of a fan-out, and nodes ready
// together, run on their own goroutines, while a call that is the only
// one to run (every step of a chain) runs on the task's. Once a call
// fails no more start; those in flight finish. Retries do not apply.
func (e *Engine) executeGraph(ctx context.Context, i uint64, g *graphPlan, spec workload.Spec, at arrival) *record.Result {
	run := &graphRun{g: g, i: i, spec: spec, calls: make([]graphCall, g.calls)}
	if e.cfg.TraceRun != "" {
		run.trace = e.traceID(i)
	}
	e.runGraph(ctx, run)
	return e.graphResult(run, at)
}

// runGraph runs a task's calls, each once every node it comes after has
// finished, until every call has finished or, once one failed (a graph of
// requests: was never sent), those in flight have.
func (e *Engine) runGraph(ctx context.Context, run *graphRun) {
	g := run.g
	t := &graphTask{run: run, waiting: make([]int, len(g.Nodes)), left: make([]int, len(g.Nodes))}
	for n := range g.Nodes {
		t.waiting[n] = len(g.Nodes[n].After)
		t.left[n] = g.Nodes[n].copies()
		for c := range t.left[n] {
			run.calls[g.first[n]+c].node = n
		}
		if t.waiting[n] == 0 {
			t.ready = append(t.ready, n)
		}
	}
	for {
		for len(t.ready) > 0 && !t.failed {
			n := t.ready[0]
			t.ready = t.ready[1:]
			e.startNode(ctx, t, n)
		}
		if t.inFlight == 0 {
			break
		}
		t.inFlight--
		t.finish(<-t.done)
	}
}

// startNode starts node n's calls, each on a goroutine, except that when
// the node is all there is to run its first call runs on the task's own
// goroutine: nothing else can become ready before all its calls end (a
// node after it waits for every copy), so this delays nothing, and it
// spares a chain a goroutine per step and a fan-out one (a new
// goroutine's stack growth is most of a call's client cost).
func (e *Engine) startNode(ctx context.Context, t *graphTask, n int) {
	run, node := t.run, &t.run.g.Nodes[n]
	first := run.g.first[n]
	if run.skips(n) {
		for c := first; c < first+node.copies(); c++ {
			run.calls[c].state = callSkipped
			t.finish(c)
		}
		return
	}
	alone := t.inFlight == 0 && len(t.ready) == 0
	from := first
	if alone {
		from++
	}
	if from < first+node.copies() && t.done == nil {
		t.done = make(chan int, run.g.calls) // never blocks a finished call
	}
	for c := from; c < first+node.copies(); c++ {
		t.inFlight++
		go func() {
			e.runCall(ctx, run, c)
			t.done <- c
		}()
	}
	if alone {
		e.runCall(ctx, run, first)
		t.finish(first)
	}
}

// finish notes call c's end; once all of a node's calls succeeded (or
// were skipped), the nodes after it with nothing else to wait for are
// ready.
func (t *graphTask) finish(c int) {
	call := &t.run.calls[c]
	switch {
	case t.run.requests != nil:
		t.failed = t.failed || call.end.IsZero() // unsent: issuing stopped or the budget is spent
	case call.state == callRan && call.tr.Err != record.ErrNone:
		t.failed = true
	}
	n := call.node
	if t.left[n]--; t.left[n] > 0 {
		return
	}
	for _, d := range t.run.g.next[n] {
		if t.waiting[d]--; t.waiting[d] == 0 {
			t.ready = append(t.ready, d)
		}
	}
}

// skips reports whether node n is a tool that only a tool call runs and
// no reply before it asked for one.
func (run *graphRun) skips(n int) bool {
	tool := run.g.Nodes[n].Tool
	if tool == nil || !tool.OnToolCall {
		return false
	}
	for _, u := range run.g.Nodes[n].After {
		for c := range run.g.Nodes[u].copies() {
			if run.calls[run.g.first[u]+c].toolCalls {
				return false
			}
		}
	}
	return true
}

// specFor is node n's spec: the task's, with the text of every call of
// the nodes it comes after appended, in After order, each after a
// RetrievedSeparator (built once: a chain's last step appends them all);
// for a node with ToolMessages, tool results that answer a reply's tool
// call come as messages after the prompt instead (toolExchanges), and the
// text of the reply that called them is in its assistant message only.
func (run *graphRun) specFor(n int) workload.Spec {
	var ex toolExchanges
	if run.g.Nodes[n].ToolMessages {
		ex = run.toolExchanges(n)
	}
	var texts []string
	size := 0
	for _, u := range run.g.Nodes[n].After {
		for c := range run.g.Nodes[u].copies() {
			call := run.g.first[u] + c
			if text := run.calls[call].text; text != "" && !ex.holds(call) {
				texts = append(texts, text)
				size += len(RetrievedSeparator) + len(text)
			}
		}
	}
	spec := run.spec
	if len(texts) > 0 {
		var b strings.Builder
		b.Grow(size)
		for _, text := range texts {
			b.WriteString(RetrievedSeparator)
			b.WriteString(text)
		}
		spec = withRetrieved(spec, b.String())
	}
	return ex.appendTo(run, spec)
}

// runCall runs call c and keeps what it yields.
func (e *Engine) runCall(ctx context.Context, run *graphRun, c int) {
	if run.requests != nil {
		e.requestCall(run, c)
		return
	}
	call := &run.calls[c]
	node := &run.g.Nodes[call.node]
	call.state = callRan
	call.spec = run.specFor(call.node)
	switch {
	case node.HTTP != nil:
		f := protocol.TemplateFields{Prompt: call.spec.Prompt, InputTokens: call.spec.InputTokens,
			MaxTokens: call.spec.MaxTokens, Class: call.spec.Class}
		if len(call.spec.Images) > 0 {
			f.Image = call.spec.Images[0].URL
		}
		if text := node.HTTP.Do(ctx, f, run.trace, c, &call.tr); call.tr.Err == record.ErrNone {
			call.text = text
		}
	case node.Tool != nil:
		e.mockTool(ctx, run, c)
	default:
		e.modelCall(ctx, run, c)
	}
}

// modelCall renders and sends a model call, keeping its reply's text
// (as the stream is parsed) when a later node reads it.
func (e *Engine) modelCall(ctx context.Context, run *graphRun, c int) {
	call := &run.calls[c]
	node := &run.g.Nodes[call.node]
	req, err := node.Render(call.spec)
	call.req = req
	if err != nil {
		now := e.clock.Now()
		call.tr = protocol.Trace{Start: now, End: now, Err: record.ErrOther, ErrMsg: "rendering: " + err.Error()}
		return
	}
	keep := run.g.keep[call.node] && req.API.KeepsText()
	if keep {
		req.KeepText = record.MaxReplyKept
	}
	call.tr.EventsUS = newEvents(req.EventsCap)
	req.TraceID, req.Attempt = run.trace, c
	client := node.Client
	if client == nil {
		client = e.cfg.Client
	}
	client.Do(ctx, req, &call.tr)
	if keep && call.tr.Err == record.ErrNone {
		call.text, call.toolCalls = call.tr.AnswerText(), call.tr.ToolCalls
		if call.toolCalls {
			call.calls = call.tr.ReplyToolCalls()
		}
		call.tr.Text, call.tr.ToolCallReply = nil, nil
	}
}

// mockTool waits the tool's latency on the engine's clock, then yields
// its synthetic result. Its latency and text are drawn from the run's
// seed, the task and the call, so a rerun draws the same.
func (e *Engine) mockTool(ctx context.Context, run *graphRun, c int) {
	call := &run.calls[c]
	tool := run.g.Nodes[call.node].Tool
	rng := rand.New(rand.NewPCG(e.cfg.Seed^run.i, uint64(c)))
	start := e.clock.Now()
	call.tr.Start, call.tr.Sent = start, start
	if !e.clock.SleepUntil(ctx, start.Add(tool.Latency.Sample(rng))) {
		call.tr.End = e.clock.Now()
		call.tr.Err, call.tr.ErrMsg = record.ErrCanceled, "mocked tool: "+ctx.Err().Error()
		return
	}
	call.tr.End = e.clock.Now()
	if tool.ResultTokens > 0 {
		call.text = workload.Text(rng, tool.ResultTokens)
	}
}
