package engine

import (
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

// Chain is what one request of a chain class does: its steps in order,
// each starting when the previous one succeeded (RAG-style: embed the
// question, retrieve context, ask the model with it). It runs as the
// graph whose nodes are its steps, each after all the steps before it
// (Graph): a step's After is ignored.
type Chain struct {
	Steps []ChainStep
}

// ChainStep is one call of a chain: a model call (Render set) or an HTTP
// call (HTTP set), whose text the next step's prompt carries.
type ChainStep = Node

// kind is the call's record.ChainStep.Kind.
func (n *Node) kind(req *protocol.Request) string {
	switch {
	case n.HTTP != nil:
		return StepKindHTTP
	case n.Tool != nil:
		return StepKindTool
	case req != nil:
		return string(req.API)
	}
	return "model"
}

// validate checks the chain as the graph it runs as.
func (c *Chain) validate(class string) error {
	if len(c.Steps) == 0 {
		return fmt.Errorf("engine: chain of class %s has no steps", class)
	}
	return c.graph().validate(class)
}

// RetrievedSeparator joins retrieved text to the prompt it is appended to.
const RetrievedSeparator = "\n\n"

// stepRecord describes one call.
func (e *Engine) stepRecord(name string, n *Node, req *protocol.Request, tr *protocol.Trace) record.ChainStep {
	sent := tr.Sent
	if sent.IsZero() {
		sent = tr.Start
	}
	cs := record.ChainStep{Name: name, Kind: n.kind(req), SendUS: e.offset(sent),
		Status: tr.Status, Error: tr.Err, BytesIn: tr.BytesIn}
	cs.DurUS = max(e.offset(tr.End)-cs.SendUS, 0)
	if !tr.FirstToken.IsZero() && req != nil && req.Stream { // a whole reply has no first token of its own
		cs.TTFTUS = e.offset(tr.FirstToken) - cs.SendUS
	}
	if tr.UsageReported {
		cs.InputTokens, cs.OutputTokens = tr.PromptTokens, tr.CompletionTokens
	}
	cs.ReplyCut = tr.TextCut || tr.ToolCallsCut // set only where the reply was kept for a later call
	return cs
}

// graphResult folds a task's calls into its record: the trace of its
// last call (the one that ended last, or the first in order that failed),
// started at its first call's start, so that result() times everything
// from the task's origin.
func (e *Engine) graphResult(run *graphRun, at arrival) *record.Result {
	steps := make([]record.ChainStep, 0, len(run.calls))
	first, last := -1, -1
	var bytes [2]int64 // out, in over all calls
	newConn := false   // some call opened a connection (the record's new_conn)
	for c := range run.calls {
		call := &run.calls[c]
		node := &run.g.Nodes[call.node]
		switch call.state {
		case callNotRun:
			continue
		case callSkipped:
			steps = append(steps, record.ChainStep{Name: run.g.names[c], Kind: node.kind(nil), Skipped: true})
			continue
		}
		tr := &call.tr
		steps = append(steps, e.stepRecord(run.g.names[c], node, call.req, tr))
		bytes[0] += tr.BytesOut
		bytes[1] += tr.BytesIn
		newConn = newConn || tr.NewConn
		if first < 0 || tr.Start.Before(run.calls[first].tr.Start) {
			first = c
		}
		switch {
		case last >= 0 && run.calls[last].tr.Err != record.ErrNone:
		case tr.Err != record.ErrNone:
			last = c
			tr.ErrMsg = fmt.Sprintf("chain step %d (%s): %s", len(steps), run.g.names[c], tr.ErrMsg)
		case last < 0 || !tr.End.Before(run.calls[last].tr.End):
			last = c
		}
	}
	r := e.foldedResult(run, first, last, at)
	r.BytesOut, r.BytesIn = bytes[0], bytes[1]
	r.NewConn = newConn
	r.Chain = steps
	r.ReplyCut = slices.ContainsFunc(steps, func(s record.ChainStep) bool { return s.ReplyCut })
	if run.trace != ([16]byte{}) {
		r.TraceID = hex.EncodeToString(run.trace[:]) // also when the task ended in an HTTP call
	}
	return r
}

// foldedResult is the record of call last's trace, shifted to start at
// call first's start.
func (e *Engine) foldedResult(run *graphRun, first, last int, at arrival) *record.Result {
	tr := run.calls[last].tr
	start := &run.calls[first].tr
	shiftUS := int64(0)
	if !tr.Sent.IsZero() && !start.Sent.IsZero() {
		shiftUS = tr.Sent.Sub(start.Sent).Microseconds()
	}
	tr.Start, tr.Sent = start.Start, start.Sent
	for k := range tr.EventsUS {
		tr.EventsUS[k] += shiftUS // events count from the record's send
	}
	if tr.Tail.Dropped > 0 {
		tr.Tail.LastUS += shiftUS // the tail's gaps are shift-free
	}
	req := run.calls[last].req
	if req == nil {
		req = &protocol.Request{} // the task ended with (or failed in) an HTTP call or a tool
	}
	if tr.FirstToken.IsZero() || req.API == "" {
		tr.FirstToken = time.Time{} // only a model's first token is the task's
	}
	return e.result(run.i, prepared{spec: run.calls[last].spec, req: req}, &tr, at)
}

// withRetrieved appends text, separators included, to the spec's prompt
// (and to the last message of a conversation).
func withRetrieved(s workload.Spec, text string) workload.Spec {
	s.Prompt += text
	if n := len(s.Messages); n > 0 {
		msgs := append([]workload.ChatMessage(nil), s.Messages...)
		msgs[n-1].Content += text
		s.Messages = msgs
	}
	return s
}

// closeChains releases the HTTP calls' idle connections once the phase is
// over (model calls share the caller's client, which the caller closes).
func (e *Engine) closeChains() {
	for _, g := range e.graphs {
		for k := range g.Nodes {
			if h := g.Nodes[k].HTTP; h != nil {
				h.Close()
			}
		}
	}
}
