package analyze

import (
	"slices"
	"strings"
)

// nodeMetricName names a graph node's latency in a comparison:
// nodes.NAME.latency_ms, as summary.json's chains.<class>.steps[] name
// the node (a fan-out's copies together).
func nodeMetricName(node string) string { return "nodes." + node + ".latency_ms" }

// nodeMetric returns the node a nodes.NAME.latency_ms metric names.
func nodeMetric(metric string) (string, bool) {
	rest, ok := strings.CutPrefix(metric, "nodes.")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, ".latency_ms")
}

// nodeMetrics are the node latency metrics both sides have, sorted by
// node name so the rows keep one order run after run.
func nodeMetrics(b, cur *Samples) []string {
	var out []string
	for name := range b.Nodes {
		if _, ok := cur.Nodes[name]; ok {
			out = append(out, nodeMetricName(name))
		}
	}
	slices.Sort(out)
	return out
}
