package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferload/inferload/analyze"
)

// compareTests names each test the comparison applied and the figures it
// judged, in the order its rows first use them, from the rows themselves
// (Delta.Test), so the method can never name a test no row used or leave
// one out: "latency percentiles by the exact quantile test (…),
// throughput by bootstrap of per-second means (…), failure rate and
// session goodput by two-proportion z".
func compareTests(c *analyze.Comparison) string {
	var tests []string
	figures := map[string][]string{}
	for _, d := range c.Deltas {
		if !slices.Contains(tests, d.Test) {
			tests = append(tests, d.Test)
		}
		if name := strings.ReplaceAll(d.Figure(), "_", " "); !slices.Contains(figures[d.Test], name) {
			figures[d.Test] = append(figures[d.Test], name)
		}
	}
	if len(tests) == 0 {
		return "none, as no figure was in both runs"
	}
	parts := make([]string, len(tests))
	for i, test := range tests {
		parts[i] = testClause(c, test, figures[test])
	}
	return strings.Join(parts, ", ")
}

// testClause says what one test judged and how.
func testClause(c *analyze.Comparison, test string, figures []string) string {
	switch test {
	case analyze.TestQuantile:
		return "latency percentiles by the exact quantile test (interval = the shifts it does not reject)"
	case analyze.TestBootstrap:
		return fmt.Sprintf("throughput by bootstrap of per-second means (%d resamples, seed %d)", c.Resamples, c.Seed)
	case analyze.TestTwoProportion:
		return andList(figures) + " by two-proportion z"
	}
	return andList(figures) + " by " + test
}

// andList joins names as prose: "a", "a and b", "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
