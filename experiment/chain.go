package experiment

import (
	"fmt"
	"maps"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/workload"
)

// newGraphs builds the engine graphs of the plan's graph and chain
// classes (a chain is the graph of its steps), keyed by class name; nil
// when no class has one. Model nodes go through client, or through a
// client for the node's own url that shares its settings.
func newGraphs(p *plan.Plan, client protocol.Client) (map[string]*engine.Graph, error) {
	var out map[string]*engine.Graph
	for _, c := range p.Workload.Classes {
		if !c.IsGraph() {
			continue
		}
		g, err := newGraph(p, &c, client)
		if err != nil {
			return nil, fmt.Errorf("workload.classes %s: %w", c.Name, err)
		}
		if out == nil {
			out = make(map[string]*engine.Graph)
		}
		out[c.Name] = g
	}
	return out, nil
}

// newGraph builds one class's graph, its nodes in the plan's topological
// order.
func newGraph(p *plan.Plan, c *plan.Class, client protocol.Client) (*engine.Graph, error) {
	nodes := c.GraphNodes()
	index := make(map[string]int, len(nodes))
	g := &engine.Graph{Nodes: make([]engine.Node, len(nodes))}
	for k := range nodes {
		n := &nodes[k]
		index[n.Name] = k
		node, err := newNode(p, c, n, client)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		for _, a := range n.After {
			node.After = append(node.After, index[a])
		}
		g.Nodes[k] = node
	}
	return g, nil
}

// newNode builds one node's call.
func newNode(p *plan.Plan, c *plan.Class, n *plan.GraphNode, client protocol.Client) (engine.Node, error) {
	node := engine.Node{Name: n.Name, Count: n.Copies()}
	switch {
	case n.Tool != nil:
		lat, err := schedule.ParseThinkTime(n.Tool.Latency)
		if err != nil {
			return node, err
		}
		node.Tool = &engine.Tool{Latency: lat, ResultTokens: n.Tool.ResultTokens, OnToolCall: n.Tool.OnToolCall}
	case n.HTTP != nil:
		opts := n.HTTP.Options()
		opts.Secrets = p.Secrets("") // the API key is not sent to an http call
		call, err := protocol.NewHTTPCall(opts)
		if err != nil {
			return node, err
		}
		node.HTTP = call
	default:
		s := n.ChainStep()
		cl, err := stepClient(&s, client)
		if err != nil {
			return node, err
		}
		node.Client = cl
		node.Render = stepRenderer(p, c, &s, n.Tools)
		node.ToolMessages = protocol.API(s.API).SendsToolMessages()
	}
	return node, nil
}

// stepClient is the client of a model step: the run's, or one for the
// step's url.
func stepClient(s *plan.ChainStep, client protocol.Client) (protocol.Client, error) {
	if s.URL == "" {
		return nil, nil // engine uses Config.Client
	}
	oa, ok := client.(*protocol.OpenAI)
	if !ok {
		return nil, fmt.Errorf("url %s needs the OpenAI client", s.URL)
	}
	return oa.WithBaseURL(s.URL)
}

// stepRenderer renders a model step's body: the step's API and model, the
// target's, class's and step's body fields merged in that order, and the
// node's tools, if any.
func stepRenderer(p *plan.Plan, c *plan.Class, s *plan.ChainStep, tools []map[string]any) engine.Renderer {
	api := protocol.API(s.API)
	model := p.Target.Model
	if s.Model != "" {
		model = s.Model
	}
	extra := make(map[string]any, len(p.Target.Body)+len(c.Body)+len(s.Body))
	maps.Copy(extra, p.Target.Body)
	maps.Copy(extra, c.Body)
	maps.Copy(extra, s.Body)
	switch {
	case tools != nil && api == protocol.APIMessages:
		extra["tools"] = protocol.MessagesTools(tools)
	case tools != nil:
		extra["tools"] = tools
	}
	stream := p.Target.Streams() && api.Streams()
	usage := p.Target.IncludesUsage()
	return func(spec workload.Spec) (*protocol.Request, error) {
		body, err := protocol.OpenAIBody{
			Model: model, Prompt: spec.Prompt, Messages: chatMessages(spec.Messages, spec.Images), Images: images(spec.Images), MaxTokens: spec.MaxTokens,
			Stream: stream, IncludeUsage: usage, IgnoreEOS: spec.IgnoreEOS, Extra: extra,
		}.Render(api)
		if err != nil {
			return nil, err
		}
		return &protocol.Request{API: api, Body: body, Stream: stream, MaxTokens: spec.MaxTokens,
			EventsCap: min(max(spec.MaxTokens, 1), maxEventsCap)}, nil
	}
}
