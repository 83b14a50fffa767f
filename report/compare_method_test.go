package report

import (
	"strings"
	"testing"

	"github.com/inferload/inferload/analyze"
)

// TestCompareMethodNamesEveryTest: the method paragraph names each test
// the rows used, with the figures the two-proportion test judged, and no
// test no row used.
func TestCompareMethodNamesEveryTest(t *testing.T) {
	t.Parallel()
	row := func(metric, test string) analyze.Delta { return analyze.Delta{Metric: metric, Test: test} }
	tests := []struct {
		name   string
		deltas []analyze.Delta
		want   string // the tests clause, between "figure: " and ". Significant"
	}{
		// Latency, throughput and failure rate: the clause as it always read.
		{"plain run", []analyze.Delta{row("ttft_ms.p99", analyze.TestQuantile), row("requests_per_s", analyze.TestBootstrap),
			row("failure_rate", analyze.TestTwoProportion), row("classes.chat.failure_rate", analyze.TestTwoProportion)},
			"latency percentiles by the exact quantile test (interval = the shifts it does not reject), throughput by bootstrap of per-second means (2000 resamples, seed 7), failure rate by two-proportion z"},
		// Accuracy and both goodputs share the two-proportion test: it
		// names all four shares, each once, in row order.
		{"every proportion", []analyze.Delta{row("failure_rate", analyze.TestTwoProportion), row("accuracy", analyze.TestTwoProportion),
			row("session_goodput", analyze.TestTwoProportion), row("classes.chat.session_goodput", analyze.TestTwoProportion),
			row("classes.agent.task_goodput", analyze.TestTwoProportion)},
			"failure rate, accuracy, session goodput and task goodput by two-proportion z"},
		// Only latencies compared: no throughput or proportion test named.
		{"latencies only", []analyze.Delta{row("e2e_ms.p50", analyze.TestQuantile)},
			"latency percentiles by the exact quantile test (interval = the shifts it does not reject)"},
		{"nothing compared", nil, "none, as no figure was in both runs"},
	}
	for _, tt := range tests {
		c := &analyze.Comparison{Deltas: tt.deltas, Resamples: 2000, Seed: 7, Confidence: 0.95}
		got := compareMethod(c)
		want := "from one test per figure: " + tt.want + ". Significant"
		if !strings.Contains(got, want) {
			t.Errorf("%s: %q\nwant it to hold %q", tt.name, got, want)
		}
	}
}
