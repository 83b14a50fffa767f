package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// graphPlan is a plan whose one class is the graph given as YAML lines
// (indented under "graph:"); line 8 of the file is the graph's first line.
func graphPlan(nodes string) string {
	return "target:\n  url: http://127.0.0.1:8000/v1\nload:\n  concurrency: 2\nworkload:\n  classes:\n    - {name: agent, weight: 1, graph: [\n" +
		nodes + "\n      ]}\n"
}

// researchGraph is plan → 3 parallel researchers → a mocked tool → answer.
const researchGraph = `        {name: plan, api: chat},
        {name: research, api: chat, after: [plan], count: 3},
        {name: search, after: [plan], tool: {latency: "uniform(10ms,20ms)", result_tokens: 50}},
        {name: answer, api: chat, after: [research, search]}`

// TestGraphParsed: a valid graph parses, sorts topologically and keeps
// each node's fields.
func TestGraphParsed(t *testing.T) {
	t.Parallel()
	// The answer is listed first: the order is the edges', not the file's.
	lines := strings.Split(researchGraph, "\n")
	first := lines[3] + ","
	p, err := Parse("plan.yaml", []byte(graphPlan(strings.Join(append([]string{first}, lines[:3]...), "\n"))))
	if err != nil {
		t.Fatal(err)
	}
	nodes := p.Workload.Classes[0].GraphNodes()
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	if want := []string{"plan", "research", "search", "answer"}; !slices.Equal(names, want) {
		t.Errorf("order %v, want %v", names, want)
	}
	if nodes[1].Copies() != 3 || nodes[2].Tool.ResultTokens != 50 || nodes[0].Copies() != 1 {
		t.Errorf("nodes %+v", nodes)
	}
}

// TestChainIsAGraph: a chain desugars into a graph whose steps each run
// after all the steps before (so each prompt carries all their text),
// under the chain's step names.
func TestChainIsAGraph(t *testing.T) {
	t.Parallel()
	c := ragClass()
	nodes := c.GraphNodes()
	want := [][]string{{}, {"embeddings"}, {"embeddings", "retrieve"}}
	for k, n := range nodes {
		if !slices.Equal(n.After, want[k]) {
			t.Errorf("node %d (%s) after %v, want %v", k, n.Name, n.After, want[k])
		}
	}
	if nodes[1].HTTP == nil || nodes[2].API != "chat" {
		t.Errorf("nodes %+v", nodes)
	}
}

// TestGraphRejected: each malformed graph is refused with an error that
// names the file's line and the field.
func TestGraphRejected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		nodes string
		want  string
	}{
		// a after b after a: the cycle is named, in edge order, at a line of it.
		{"cycle", `        {name: a, api: chat, after: [b]},
        {name: b, api: chat, after: [a]}`, "plan.yaml:9: workload.classes[0].graph[1].after: cycle: b -> a -> b"},
		// A three-node cycle behind a valid root.
		{"long cycle", `        {name: r, api: chat},
        {name: a, api: chat, after: [r, c]},
        {name: b, api: chat, after: [a]},
        {name: c, api: chat, after: [b]}`, "cycle: b -> c -> a -> b"},
		// after names a node that does not exist.
		{"unknown", `        {name: a, api: chat},
        {name: b, api: chat, after: [a, z]}`, `plan.yaml:9: workload.classes[0].graph[1].after[1]: "z" is not a node`},
		// A node after itself.
		{"self", `        {name: a, api: chat, after: [a]}`, "graph[0].after[0]: a node cannot run after itself"},
		// Two nodes with one name.
		{"duplicate", `        {name: a, api: chat},
        {name: a, api: chat}`, `plan.yaml:9: workload.classes[0].graph[1].name: "a" is already the name of node 0`},
		// A node without a name cannot be waited for.
		{"no name", `        {api: chat}`, "plan.yaml:8: workload.classes[0].graph[0]: name is required"},
		// Neither api, http nor tool.
		{"no call", `        {name: a, api: chat},
        {name: b, after: [a]}`, "plan.yaml:9: workload.classes[0].graph[1]: set exactly one of api"},
		// Two kinds of call on one node.
		{"two calls", `        {name: a, api: chat, tool: {latency: 1s}}`, "plan.yaml:8: workload.classes[0].graph[0]: set exactly one of api"},
		// Only tools: nothing of the target is tested.
		{"no model", `        {name: a, tool: {latency: 1s}}`, "graph: needs at least one model node"},
		// A fan-out of zero copies.
		{"count 0", `        {name: a, api: chat, count: -1}`, "plan.yaml:8: workload.classes[0].graph[0].count: -1"},
		// Too many copies for one node.
		{"count big", `        {name: a, api: chat, count: 65}`, "graph[0].count: 65: want 1 to 64"},
		// Too many calls per task over all nodes.
		{"calls", `        {name: a, api: chat, count: 40},
        {name: b, api: chat, count: 40}`, "graph: 80 calls per task"},
		// A latency that is not a distribution.
		{"latency", `        {name: a, api: chat},
        {name: t, after: [a], tool: {latency: "normal(1s)"}}`, "plan.yaml:9: workload.classes[0].graph[1].tool.latency: think time"},
		// on_tool_call needs a chat node upstream to ask for the tool.
		{"on_tool_call", `        {name: a, api: chat},
        {name: t, tool: {on_tool_call: true}}`, "graph[1].tool.on_tool_call: needs a chat, messages or ollama node in after"},
		// A completions reply calls no tool.
		{"on_tool_call completions", `        {name: a, api: completions},
        {name: t, after: [a], tool: {on_tool_call: true}}`, "graph[1].tool.on_tool_call: needs a chat, messages or ollama node in after"},
		// Tools go with chat or messages.
		{"tools", `        {name: a, api: embeddings, tools: [{type: function}]}`, "graph[0].tools: tools go with a call whose reply can call them"},
	}
	for _, tt := range tests {
		_, err := Parse("plan.yaml", []byte(graphPlan(tt.nodes)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestGraphToolAPIs: a node of the APIs whose replies can call a tool
// (chat, messages, ollama) may offer tools and feed an on_tool_call tool.
func TestGraphToolAPIs(t *testing.T) {
	t.Parallel()
	for _, api := range []string{"chat", "messages", "ollama"} {
		nodes := `        {name: a, api: ` + api + `, tools: [{type: function, function: {name: search}}]},
        {name: t, after: [a], tool: {on_tool_call: true}},
        {name: b, api: ` + api + `, after: [t]}`
		if _, err := Parse("plan.yaml", []byte(graphPlan(nodes))); err != nil {
			t.Errorf("%s: %v", api, err)
		}
	}
}

// TestGraphWithChainOrTurns: a graph is its own kind of class.
func TestGraphWithChainOrTurns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(c *Class)
		want   string
	}{
		// A chain is a graph already.
		{"chain", func(c *Class) { c.Chain = []ChainStep{{API: "chat"}} }, "a class is a graph or a chain, not both"},
		// A conversation's turns are not a graph's nodes.
		{"turns", func(c *Class) { c.Turns = 3 }, "a graph cannot also be a multi-turn conversation"},
		// The nodes carry the API.
		{"api", func(c *Class) { c.API = "chat" }, "workload.classes[0].api: has no effect with a graph"},
		// At most 32 nodes.
		{"nodes", func(c *Class) {
			for k := range 33 {
				c.Graph = append(c.Graph, GraphNode{Name: "n" + string(rune('a'+k%26)) + string(rune('a'+k/26)), API: "chat"})
			}
		}, "graph: 34 nodes: at most 32"},
	}
	for _, tt := range tests {
		p := closedPlan()
		c := Class{Name: "agent", Weight: 1, Graph: []GraphNode{{Name: "a", API: "chat"}}}
		tt.change(&c)
		p.Workload.Classes = []Class{c}
		p.ApplyDefaults()
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestGraphRoundTripRedacted: a graph survives plan.yaml (the nodes'
// fields all written back) with an http node's key hidden.
func TestGraphRoundTripRedacted(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "graph.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("graph.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("secret-1")) {
		t.Errorf("plan.yaml shows the http node's key:\n%s", out)
	}
	back, err := Parse("plan.yaml", out)
	if err != nil {
		t.Fatalf("written plan does not load: %v\n%s", err, out)
	}
	g := back.Workload.Classes[0].GraphNodes()
	if len(g) != 5 || g[0].Name != "plan" || g[0].Tools == nil || g[1].Tool == nil || !g[1].Tool.OnToolCall || g[2].Copies() != 3 || g[4].HTTP == nil {
		t.Errorf("graph after the round trip: %+v", g)
	}
}
