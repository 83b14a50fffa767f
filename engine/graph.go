package engine

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/schedule"
)

// Kinds of record.ChainStep beside the model APIs.
const (
	// StepKindHTTP is an HTTP (retrieval or tool) call.
	StepKindHTTP = "http"
	// StepKindTool is a mocked tool.
	StepKindTool = "tool"
)

// Graph is what one task of a graph class does: calls that start once the
// nodes they come after succeeded, some of them in parallel (an agent
// that plans, fans out to researchers, then answers). A chain is a graph
// whose steps each come after the one before.
type Graph struct {
	// Nodes in topological order: each node's After lists nodes before it.
	Nodes []Node
}

// Node is one call of a graph, run Count times in parallel: a model call
// (Render set), an HTTP call (HTTP set) or a mocked tool (Tool set).
type Node struct {
	// Name labels the node in records and the summary; its copies are
	// name#1, name#2, ...
	Name string
	// After lists the indexes of the nodes this one waits for. The text
	// each of their calls yields (a model's reply, an HTTP call's
	// extracted text, a tool's result) is appended to this node's prompt,
	// in this order.
	After []int
	// Count is the number of parallel copies (fan-out); 0 means 1.
	Count int
	// Render builds a model call from the task's spec, whose prompt by
	// then carries the upstream text. It runs when the call starts, so its
	// (microseconds of) work is part of the task.
	Render Renderer
	// Client sends the model call; nil uses Config.Client.
	Client protocol.Client
	// HTTP, when set instead of Render, is sent with the prompt.
	HTTP *protocol.HTTPCall
	// Tool, when set instead of Render, is a mocked tool.
	Tool *Tool
	// Delay, in a graph of requests (callGraph), is how long the node's
	// calls wait after the last reply they come after ended: a user's
	// think time between turns, a recorded delay between an agent's
	// calls. nil means none.
	Delay ThinkTime
	// Stream, in a graph of requests, is which of the task's session
	// streams builds the node's calls (a replayed task's sessions, each
	// its own stream; a conversation has one).
	Stream int
	// ToolMessages, on a chat, messages or ollama model call, sends the
	// result of an upstream tool (or HTTP) call that answers an upstream
	// reply's tool call as the API's function calling does: after the
	// prompt, the assistant turn that made the call, then the result
	// naming it (a "tool" message; Anthropic's tool_result block), as the
	// renderer writes them (graph_tools.go). Without it, and for a result
	// no tool call asked for, the result is appended to the prompt as
	// text.
	ToolMessages bool
}

// Tool is a mocked tool call: it waits Latency on the engine's clock and
// returns ResultTokens tokens of synthetic text.
type Tool struct {
	Latency      schedule.ThinkTime
	ResultTokens int
	// OnToolCall runs the tool only when an upstream model reply asked
	// for a tool call; otherwise the node is skipped (recorded, not failed).
	OnToolCall bool
}

// MaxGraphCalls bounds the calls of one task, copies included.
const MaxGraphCalls = 64

func (n *Node) copies() int { return max(n.Count, 1) }

// callName is the name of copy k (from 0) of the node.
func (n *Node) callName(k int) string {
	if n.copies() == 1 {
		return n.Name
	}
	return n.Name + "#" + strconv.Itoa(k+1)
}

// graphPlan is a Graph with what its runs look up precomputed.
type graphPlan struct {
	*Graph
	first []int   // the index of node n's first call
	calls int     // calls per task
	next  [][]int // the nodes after node n
	// keep marks model nodes whose reply text a later node reads.
	keep []bool
	// names of each call.
	names []string
}

func (g *Graph) validate(class string) error {
	if len(g.Nodes) == 0 {
		return fmt.Errorf("engine: graph of class %s has no nodes", class)
	}
	var errs []error
	calls := 0
	for k := range g.Nodes {
		n := &g.Nodes[k]
		set := 0
		for _, ok := range []bool{n.Render != nil, n.HTTP != nil, n.Tool != nil} {
			if ok {
				set++
			}
		}
		if set != 1 {
			errs = append(errs, fmt.Errorf("engine: graph of class %s, node %d: set exactly one of Render, HTTP or Tool", class, k+1))
		}
		for _, u := range n.After {
			if u < 0 || u >= k {
				errs = append(errs, fmt.Errorf("engine: graph of class %s, node %d: after %d is not an earlier node", class, k+1, u+1))
			}
		}
		calls += n.copies()
	}
	if calls > MaxGraphCalls {
		errs = append(errs, fmt.Errorf("engine: graph of class %s: %d calls per task, at most %d", class, calls, MaxGraphCalls))
	}
	return errors.Join(errs...)
}

// plan precomputes a valid graph's lookups.
func (g *Graph) plan() *graphPlan {
	p := &graphPlan{Graph: g, first: make([]int, len(g.Nodes)), next: make([][]int, len(g.Nodes)),
		keep: make([]bool, len(g.Nodes))}
	for k := range g.Nodes {
		n := &g.Nodes[k]
		p.first[k] = p.calls
		p.calls += n.copies()
		for c := range n.copies() {
			p.names = append(p.names, n.callName(c))
		}
		for _, u := range n.After {
			p.next[u] = append(p.next[u], k)
			p.keep[u] = p.keep[u] || g.Nodes[u].Render != nil
		}
	}
	return p
}

// graph is a chain as a graph: each step after every step before it, in
// order, so its prompt carries all their text (the plan's desugaring,
// plan.Class.GraphNodes, does the same).
func (c *Chain) graph() *Graph {
	g := &Graph{Nodes: make([]Node, len(c.Steps))}
	earlier := make([]int, len(c.Steps))
	for k, s := range c.Steps {
		earlier[k] = k
		s.After = earlier[:k:k]
		g.Nodes[k] = s
	}
	return g
}

// validateGraphs checks every graph and chain of the config.
func (c *Config) validateGraphs() error {
	var errs []error
	for class, ch := range c.Chains {
		if ch == nil {
			errs = append(errs, fmt.Errorf("engine: chain of class %s is nil", class))
			continue
		}
		errs = append(errs, ch.validate(class))
		if c.Graphs[class] != nil {
			errs = append(errs, fmt.Errorf("engine: class %s has both a chain and a graph", class))
		}
	}
	for class, g := range c.Graphs {
		if g == nil {
			errs = append(errs, fmt.Errorf("engine: graph of class %s is nil", class))
			continue
		}
		errs = append(errs, g.validate(class))
	}
	return errors.Join(errs...)
}

// graphPlans builds the plans of the config's graphs and chains, by class.
func (c *Config) graphPlans() map[string]*graphPlan {
	if len(c.Chains)+len(c.Graphs) == 0 {
		return nil
	}
	out := make(map[string]*graphPlan, len(c.Chains)+len(c.Graphs))
	for class, ch := range c.Chains {
		out[class] = ch.graph().plan()
	}
	for class, g := range c.Graphs {
		out[class] = g.plan()
	}
	return out
}
