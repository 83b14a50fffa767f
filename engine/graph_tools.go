package engine

import (
	"slices"

	"github.com/inferload/inferload/workload"
)

// This file: a tool's result as function calling sends it to the next
// model call (chat, messages, ollama; the renderer writes each API's
// shape). A reply that calls tools is followed, in the next request, by
// that assistant turn (its calls as the reply had them) and one result
// per call answered, naming the call. In a graph the tool runs as a node after the model node whose reply
// called it; copy k of the tool node answers the reply's call k, and a
// copy beyond the reply's calls (or a tool no reply called) stays text
// appended to the prompt.

// toolExchange is one reply that called tools and the results answering
// them, as calls of the task.
type toolExchange struct {
	caller  int   // the model call whose reply called the tools
	answers []int // the tool calls, in answer order
	indexes []int // answers[k] answers the caller's call indexes[k]
}

// toolExchanges are the exchanges a node's prompt carries, in After order.
type toolExchanges []toolExchange

// toolExchanges finds, for node n, the results of its upstream tool and
// HTTP nodes that answer a tool call of the model call before them.
func (run *graphRun) toolExchanges(n int) toolExchanges {
	var out toolExchanges
	for _, u := range run.g.Nodes[n].After {
		node := &run.g.Nodes[u]
		if node.Tool == nil && node.HTTP == nil {
			continue
		}
		caller := run.toolCaller(u)
		if caller < 0 {
			continue
		}
		for c := range node.copies() {
			call := run.g.first[u] + c
			// A call without an id cannot be answered by name.
			if c >= len(run.calls[caller].calls) || run.calls[caller].calls[c].ID == "" || run.calls[call].text == "" {
				continue
			}
			k := slices.IndexFunc(out, func(e toolExchange) bool { return e.caller == caller })
			if k < 0 {
				out = append(out, toolExchange{caller: caller})
				k = len(out) - 1
			}
			out[k].answers = append(out[k].answers, call)
			out[k].indexes = append(out[k].indexes, c)
		}
	}
	return out
}

// toolCaller is the first call, in node u's After order, whose reply
// made tool calls that were kept; -1 without one.
func (run *graphRun) toolCaller(u int) int {
	for _, m := range run.g.Nodes[u].After {
		for c := range run.g.Nodes[m].copies() {
			if call := run.g.first[m] + c; len(run.calls[call].calls) > 0 {
				return call
			}
		}
	}
	return -1
}

// holds reports whether call's text goes in a message of the exchanges
// (a caller's reply or an answer), not appended to the prompt.
func (ex toolExchanges) holds(call int) bool {
	for _, e := range ex {
		if e.caller == call || slices.Contains(e.answers, call) {
			return true
		}
	}
	return false
}

// appendTo puts the exchanges after spec's prompt: its conversation (or
// the prompt as its one user message), then per exchange the assistant
// message with the calls answered (a call no message answers would leave
// the request invalid) and a tool message per answer.
func (ex toolExchanges) appendTo(run *graphRun, spec workload.Spec) workload.Spec {
	if len(ex) == 0 {
		return spec
	}
	msgs := slices.Clone(spec.Messages)
	if len(msgs) == 0 {
		msgs = []workload.ChatMessage{{Role: "user", Content: spec.Prompt}}
	}
	for _, e := range ex {
		caller := &run.calls[e.caller]
		asked := workload.ChatMessage{Role: "assistant", Content: caller.text}
		for _, i := range e.indexes {
			c := caller.calls[i]
			asked.ToolCalls = append(asked.ToolCalls, workload.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		msgs = append(msgs, asked)
		for k, a := range e.answers {
			msgs = append(msgs, workload.ChatMessage{Role: "tool", Content: run.calls[a].text, ToolCallID: caller.calls[e.indexes[k]].ID})
		}
	}
	spec.Messages = msgs
	return spec
}
