package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/workload"
)

// Bounds on workload.classes[].graph: each node is a row of the report
// and each call a goroutine and a record entry per task.
const (
	MaxGraphNodes = 32
	MaxGraphCalls = 64
)

// GraphNode is one node of an agent graph (workload.classes[].graph): a
// model call (api), an HTTP tool call (http) or a mocked tool (tool),
// started once every node named in After succeeded.
type GraphNode struct {
	// Name labels the node in records and the summary (required, unique).
	Name string `yaml:"name"`
	// After names the nodes this one waits for; their output text is
	// appended to its prompt in this order. None: it starts at once.
	After []string `yaml:"after"`
	// Count runs the node as that many parallel copies (fan-out); a node
	// after it waits for all of them (fan-in). Default 1.
	Count int `yaml:"count"`
	// API, URL, Model and Body make a model call, as in a chain step.
	API   string         `yaml:"api"`
	URL   string         `yaml:"url"`
	Model string         `yaml:"model"`
	Body  map[string]any `yaml:"body"`
	// Tools are OpenAI function definitions sent with a chat call (the
	// body's "tools"), or with a messages call in Anthropic's shape, or
	// with an ollama (/api/chat) call as they are.
	Tools []map[string]any `yaml:"tools"`
	// HTTP makes the node a real HTTP tool call.
	HTTP *HTTPStep `yaml:"http"`
	// Tool makes the node a mocked tool.
	Tool *ToolNode `yaml:"tool"`
}

// ToolNode is a mocked tool: it waits Latency, then returns ResultTokens
// tokens of synthetic text.
type ToolNode struct {
	// Latency is a think-time distribution: "500ms", "uniform(1s,5s)",
	// "exponential(2s)" (default: none).
	Latency string `yaml:"latency"`
	// ResultTokens is the length of the text it returns.
	ResultTokens int `yaml:"result_tokens"`
	// OnToolCall runs the tool only when an upstream model reply asked
	// for a tool call; otherwise the node is skipped (not failed).
	OnToolCall bool `yaml:"on_tool_call"`
}

// Copies is the node's count with its default applied.
func (n *GraphNode) Copies() int { return max(n.Count, 1) }

// ChainStep is the node's call as a chain step, so model and HTTP nodes
// are checked and built by the chain's code.
func (n *GraphNode) ChainStep() ChainStep {
	return ChainStep{Name: n.Name, API: n.API, URL: n.URL, Model: n.Model, Body: n.Body, HTTP: n.HTTP}
}

// IsGraph reports whether the class runs several calls per task: a graph,
// or a chain (a graph whose steps each wait for the one before).
func (c *Class) IsGraph() bool { return len(c.Chain) > 0 || len(c.Graph) > 0 }

// GraphNodes is the class's graph in topological order (stable: among
// nodes ready together, the one listed first comes first); a chain
// becomes the graph of its steps, each after the one before. Nil for a
// class of single requests. The graph must be valid (Validate).
//
// A chain's step comes after every step before it (not only the last),
// so its prompt carries every earlier step's text in step order.
func (c *Class) GraphNodes() []GraphNode {
	if len(c.Chain) > 0 {
		names := ChainStepNames(c.Chain)
		out := make([]GraphNode, len(c.Chain))
		for k, s := range c.Chain {
			// After every earlier step, in order: each step's prompt
			// carries the text of all of them, as a chain's always has.
			out[k] = GraphNode{Name: names[k], API: s.API, URL: s.URL, Model: s.Model, Body: s.Body, HTTP: s.HTTP,
				After: names[:k:k]}
		}
		return out
	}
	order, _ := graphOrder(c.Graph)
	out := make([]GraphNode, len(order))
	for k, i := range order {
		out[k] = c.Graph[i]
	}
	return out
}

// graphOrder sorts the nodes topologically (Kahn's algorithm, lowest index
// first among the ready). When the graph has a cycle it returns the nodes
// it could order and one cycle, as indexes in edge order. Unknown names in
// after are ignored here (the validator names them).
func graphOrder(nodes []GraphNode) (order, cycle []int) {
	index := make(map[string]int, len(nodes))
	for k, n := range nodes {
		if _, dup := index[n.Name]; !dup {
			index[n.Name] = k
		}
	}
	waiting := make([]int, len(nodes))
	next := make([][]int, len(nodes))
	for k, n := range nodes {
		for _, a := range n.After {
			if u, ok := index[a]; ok {
				waiting[k]++
				next[u] = append(next[u], k)
			}
		}
	}
	placed := make([]bool, len(nodes))
	for len(order) < len(nodes) {
		k := -1
		for j := range nodes {
			if !placed[j] && waiting[j] == 0 {
				k = j
				break
			}
		}
		if k < 0 {
			return order, findCycle(nodes, index, placed)
		}
		placed[k] = true
		order = append(order, k)
		for _, d := range next[k] {
			waiting[d]--
		}
	}
	return order, nil
}

// findCycle walks after-edges from an unplaced node: every unplaced node
// waits for another unplaced one, so the walk must revisit a node, and
// the nodes from its first visit on are a cycle.
func findCycle(nodes []GraphNode, index map[string]int, placed []bool) []int {
	k := slices.Index(placed, false)
	seen := map[int]int{}
	var path []int
	for {
		if at, ok := seen[k]; ok {
			cycle := path[at:]
			slices.Reverse(cycle) // edge order: each node is after the one before
			return cycle
		}
		seen[k] = len(path)
		path = append(path, k)
		for _, a := range nodes[k].After {
			if u, ok := index[a]; ok && !placed[u] {
				k = u
				break
			}
		}
	}
}

// graph checks a class's graph.
func (v *validator) graph(path string, c *Class) {
	if len(c.Graph) == 0 {
		return
	}
	path += ".graph"
	class := strings.TrimSuffix(path, ".graph")
	switch {
	case len(c.Chain) > 0:
		v.fail(path, "a class is a graph or a chain, not both (a chain is a graph whose steps each have after: the step before)")
	case c.Turns > 1:
		v.fail(path, "a graph cannot also be a multi-turn conversation (turns)")
	case c.API != "":
		v.fail(class+".api", "has no effect with a graph: set api in each node")
	}
	if len(c.Graph) > MaxGraphNodes {
		v.fail(path, "%d nodes: at most %d", len(c.Graph), MaxGraphNodes)
	}
	names := map[string]int{}
	calls, models := 0, 0
	for k := range c.Graph {
		n := &c.Graph[k]
		at := fmt.Sprintf("%s[%d]", path, k)
		if first, dup := names[n.Name]; dup && n.Name != "" {
			v.fail(at+".name", "%q is already the name of node %d", n.Name, first)
		} else {
			names[n.Name] = k
		}
		if v.graphNode(at, n) {
			models++
		}
		calls += n.Copies()
	}
	if calls > MaxGraphCalls {
		v.fail(path, "%d calls per task (counting each copy): at most %d", calls, MaxGraphCalls)
	}
	if models == 0 {
		v.fail(path, "needs at least one model node (api)")
	}
	v.graphEdges(path, c.Graph, names)
}

// graphNode checks one node and reports whether it is a model node.
func (v *validator) graphNode(path string, n *GraphNode) bool {
	if n.Name == "" {
		v.fail(path, "name is required: after refers to nodes by name")
	}
	if n.Count < 0 || n.Count > MaxGraphCalls {
		v.fail(path+".count", "%d: want 1 to %d parallel copies", n.Count, MaxGraphCalls)
	}
	if n.Tools != nil && !callsTools(n.API) {
		v.fail(path+".tools", "tools go with a call whose reply can call them (api: chat, messages or ollama)")
	}
	if n.Tool == nil {
		if n.API == "" && n.HTTP == nil {
			v.fail(path, "set exactly one of api (a model call), http (an HTTP call) or tool (a mocked tool)")
			return false
		}
		step := n.ChainStep()
		return v.chainStep(path, &step)
	}
	if n.API != "" || n.HTTP != nil {
		v.fail(path, "set exactly one of api (a model call), http (an HTTP call) or tool (a mocked tool)")
		return false
	}
	if n.URL != "" || n.Model != "" || n.Body != nil {
		v.fail(path, "url, model and body belong to model nodes")
	}
	if _, err := schedule.ParseThinkTime(n.Tool.Latency); err != nil {
		v.fail(path+".tool.latency", "%v", err)
	}
	if n.Tool.ResultTokens < 0 || n.Tool.ResultTokens > workload.MaxLength {
		v.fail(path+".tool.result_tokens", "%d: want 0 to %d", n.Tool.ResultTokens, workload.MaxLength)
	}
	return false
}

// graphEdges checks the after lists: known names, no node after itself,
// no cycle, and on_tool_call tools after a model node.
func (v *validator) graphEdges(path string, nodes []GraphNode, names map[string]int) {
	for k, n := range nodes {
		at := fmt.Sprintf("%s[%d].after", path, k)
		for j, a := range n.After {
			u, ok := names[a]
			switch {
			case !ok:
				v.fail(fmt.Sprintf("%s[%d]", at, j), "%q is not a node of this graph", a)
			case u == k:
				v.fail(fmt.Sprintf("%s[%d]", at, j), "a node cannot run after itself")
			}
		}
		if n.Tool != nil && n.Tool.OnToolCall && !slices.ContainsFunc(n.After, func(a string) bool {
			u, ok := names[a]
			return ok && callsTools(nodes[u].API)
		}) {
			v.fail(fmt.Sprintf("%s[%d].tool.on_tool_call", path, k), "needs a chat, messages or ollama node in after, whose reply may ask for the tool")
		}
	}
	if _, cycle := graphOrder(nodes); len(cycle) > 1 {
		ring := make([]string, 0, len(cycle)+1)
		for _, k := range cycle {
			ring = append(ring, nodes[k].Name)
		}
		ring = append(ring, nodes[cycle[0]].Name)
		v.fail(fmt.Sprintf("%s[%d].after", path, cycle[0]), "cycle: %s", strings.Join(ring, " -> "))
	}
}

// redactGraph copies a graph, hiding secrets as redactChain does.
func redactGraph(nodes []GraphNode) []GraphNode {
	if nodes == nil {
		return nil
	}
	out := slices.Clone(nodes)
	for k := range out {
		s := redactChain([]ChainStep{out[k].ChainStep()})[0]
		out[k].Body, out[k].HTTP = s.Body, s.HTTP
	}
	return out
}

// httpSteps lists the class's HTTP calls, chain steps and graph nodes.
func (c *Class) httpSteps() []*HTTPStep {
	var out []*HTTPStep
	for _, s := range c.Chain {
		if s.HTTP != nil {
			out = append(out, s.HTTP)
		}
	}
	for _, n := range c.Graph {
		if n.HTTP != nil {
			out = append(out, n.HTTP)
		}
	}
	return out
}
