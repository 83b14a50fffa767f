package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferload/inferload/analyze"

	"github.com/inferload/inferload/internal/golden"
)

// fixedComparison is a hand-made comparison covering every kind of row: a
// regression beyond its limit, a significant improvement, noise, a
// throughput drop, a failure-rate rise, a zero baseline, an unused limit
// and environment changes (one carrying markup a target could send), a
// difference the batches could not confirm and one they had too few
// values to check, and a warning (cached prompt tokens that differ).
func fixedComparison() *analyze.Comparison {
	rel := func(v float64) *float64 { return &v }
	return &analyze.Comparison{
		Baseline: "20260101T000000Z-base", Current: "20260102T000000Z-cur",
		Confidence: 0.95, Resamples: 2000, Seed: 0,
		Limits:       []string{"ttft_ms.p99=10%", "e2e_ms.p99=10%", "output_tokens_per_s=10%", "classes.gone.e2e_ms.p99=5%"},
		UnusedLimits: []string{"classes.gone.e2e_ms.p99=5%"},
		Deltas: []analyze.Delta{
			{Metric: "ttft_ms.p50", Baseline: 101.2, Current: 98.7, Diff: -2.5, DiffLow: -4.1, DiffHigh: -0.9, Relative: rel(-0.0247), PValue: 0.0004, Test: analyze.TestQuantile, Level: 0.95, Significant: true, Change: "better", BaselineN: 3000, CurrentN: 2900},
			{Metric: "ttft_ms.p99", Baseline: 250.5, Current: 262.4, Diff: 11.9, DiffLow: -6.2, DiffHigh: 30.3, Relative: rel(0.0475), PValue: 0.31, Test: analyze.TestQuantile, Level: 0.9833, Family: 3, Change: "same", Limit: "10%", BaselineN: 3000, CurrentN: 2900},
			{Metric: "itl_ms.p99", Baseline: 21, Current: 22, Diff: 1, DiffLow: -3, DiffHigh: 5, Relative: rel(0.0476), PValue: 1, Test: analyze.TestQuantile, Level: 0.95, Change: analyze.ChangeTooShort, NeededN: 299, Limit: "10%", BaselineN: 120, CurrentN: 130},
			{Metric: "e2e_ms.p99", Baseline: 1320, Current: 1518, Diff: 198, DiffLow: 150, DiffHigh: 240, Relative: rel(0.15), PValue: 1e-40, Test: analyze.TestQuantile, Level: 0.9833, Family: 3, Significant: true, Change: "worse", Limit: "10%", Regression: true, BaselineN: 3000, CurrentN: 2900},
			{Metric: "output_tokens_per_s", Baseline: 1900.5, Current: 1650.25, Diff: -250.25, DiffLow: -270, DiffHigh: -230, Relative: rel(-0.1317), PValue: 0, Test: analyze.TestBootstrap, Level: 0.9833, Family: 3, Significant: true, Change: "worse", Limit: "10%", Regression: true, BaselineN: 60, CurrentN: 60},
			{Metric: "tpot_ms.p90", Baseline: 40, Current: 46, Diff: 6, DiffLow: 4, DiffHigh: 8, Relative: rel(0.15), PValue: 1e-6, Test: analyze.TestQuantile, Level: 0.95, Change: analyze.ChangeCannotTell, BaselineN: 3000, CurrentN: 2900,
				Runs: &analyze.RunsCheck{Test: analyze.TestBatchMeans, Diff: 5.5, DiffLow: -2, DiffHigh: 13, PValue: 0.14, DF: 13.2, BaselineUnits: 8, CurrentUnits: 8}},
			{Metric: "tpot_ms.p99", Baseline: 60, Current: 75, Diff: 15, DiffLow: 9, DiffHigh: 21, Relative: rel(0.25), PValue: 1e-5, Test: analyze.TestQuantile, Level: 0.95, Change: analyze.ChangeCannotTell, BaselineN: 3000, CurrentN: 2900,
				Runs: &analyze.RunsCheck{Test: analyze.TestBatchMeans, PValue: 1, BaselineUnits: 1, CurrentUnits: 1, TooFew: true}},
			{Metric: "failure_rate", Baseline: 0, Current: 0.05, Diff: 0.05, DiffLow: 0.04, DiffHigh: 0.06, PValue: 2e-9, Test: analyze.TestTwoProportion, Level: 0.95, Significant: true, Change: "worse", BaselineN: 3000, CurrentN: 3050},
		},
		Env: []analyze.EnvChange{
			{Field: "target.model", Baseline: "llama-7b", Current: `<script>alert(1)</script>|x`},
			{Field: "target.served.version", Baseline: "0.6.1", Absent: "current"},
		},
		Warnings: []string{"cached prompt tokens differ: baseline 0 (0.0% of 1280), current 864 (67.5% of 1280): " +
			"a warm prefix cache flatters the current run's TTFT; did it resend an earlier run's prompts (workload.salt off or fixed)?"},
		Regressions:  2,
		BaselineRuns: 1, CurrentRuns: 1, Batches: 8,
	}
}

func TestCompareGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file  string
		write func(*bytes.Buffer, *analyze.Comparison) error
	}{
		// The PR-comment rendering.
		{"compare.md.golden", func(b *bytes.Buffer, c *analyze.Comparison) error { return WriteCompareMarkdown(b, c) }},
		// The machine-readable one (docs/compare.md documents its fields).
		{"compare.json.golden", func(b *bytes.Buffer, c *analyze.Comparison) error { return WriteCompareJSON(b, c) }},
		// The terminal table.
		{"compare.txt.golden", func(b *bytes.Buffer, c *analyze.Comparison) error { return WriteCompare(b, c) }},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := tt.write(&b, fixedComparison()); err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		golden.Check(t, filepath.Join("testdata", tt.file), b.Bytes())
	}
}

// TestCompareMarkdownLeadsWithWhatMatters: a pull-request comment's first
// table holds the regressions, the other gated figures and the material
// changes (significant by 5% or more, or from zero), worse first; a
// significant +0.4% on ITL waits in the folded full table. A NOT VALID run
// heads the comment.
func TestCompareMarkdownLeadsWithWhatMatters(t *testing.T) {
	t.Parallel()
	c := fixedComparison()
	rel := 0.004
	c.Deltas = append(c.Deltas, analyze.Delta{Metric: "itl_ms.p50", Baseline: 20, Current: 20.08, Diff: 0.08, DiffLow: 0.02, DiffHigh: 0.14,
		Relative: &rel, PValue: 0.001, Test: analyze.TestQuantile, Level: 0.95, Significant: true, Change: "worse", BaselineN: 90000, CurrentN: 90000})
	c.NotValid = []string{"current 20260102T000000Z-cur is NOT VALID: 24 successful measured requests cannot back an E2E p90"}
	var b bytes.Buffer
	if err := WriteCompareMarkdown(&b, c); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	first := out[:strings.Index(out, "<details>")]
	order := []string{"e2e\\_ms.p99", "output\\_tokens\\_per\\_s", "ttft\\_ms.p99", "itl\\_ms.p99", "failure\\_rate"}
	last := -1
	for _, m := range order {
		i := strings.Index(first, "| "+m+" |")
		if i <= last {
			t.Fatalf("first table: %s at %d after %d; want the order %v\n%s", m, i, last, order, first)
		}
		last = i
	}
	if strings.Contains(first, "ttft\\_ms.p50") || strings.Contains(first, "tpot\\_ms.p90") || strings.Contains(first, "itl\\_ms.p50") || !strings.Contains(out[len(first):], "| itl\\_ms.p50 |") {
		t.Errorf("a significant +0.4%% is in the first table, or missing from the full one:\n%s", out)
	}
	if !strings.HasPrefix(out, "### ❌ inferload compare: REGRESSION:") || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "but current 20260102T000000Z-cur is NOT VALID") {
		t.Errorf("headline %q: want the regression and the NOT VALID run", strings.SplitN(out, "\n", 2)[0])
	}
	c.Regressions = 0
	for i := range c.Deltas {
		c.Deltas[i].Regression = false
	}
	if h := compareHeadline(c); !strings.HasPrefix(h, "NOT VALID: no figure is significantly worse") {
		t.Errorf("headline without regression %q: want NOT VALID first", h)
	}
}

func TestCompareMarkdownEscapes(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteCompareMarkdown(&b, fixedComparison()); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	// A target's model name can neither inject HTML nor add a table cell.
	if strings.Contains(md, "<script>") || !strings.Contains(md, `&lt;script&gt;alert(1)&lt;/script&gt;\|x`) {
		t.Errorf("model name not escaped:\n%s", md)
	}
}

func TestCompareJSONRoundTrips(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteCompareJSON(&b, fixedComparison()); err != nil {
		t.Fatal(err)
	}
	var back analyze.Comparison
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	// The verdict survives the trip: a CI script can read it back.
	if back.Verdict() != "regression" || len(back.Worse()) != 2 {
		t.Errorf("decoded verdict %s, worse %v", back.Verdict(), back.Worse())
	}
}

func TestCompareHTML(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteCompareHTML(&b, fixedComparison()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`id="compare-verdict"`, `id="compare-figures"`, `id="compare-environment"`,
		// Escaped by html/template, never live markup.
		`&lt;script&gt;alert(1)&lt;/script&gt;|x`,
		"REGRESSION", "e2e_ms.p99 no more than 10% worse",
		// The warning is on the verdict, where it is read first.
		"Warning: cached prompt tokens differ",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("compare.html lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>alert(1)") {
		t.Error("compare.html carries a live script from env.json")
	}
	// Self-contained: no resource is fetched from the network.
	if strings.Contains(page, "src=\"http") || strings.Contains(page, "href=\"http") {
		t.Error("compare.html links to the network")
	}
	if err := WriteCompareHTML(&b, nil); err == nil {
		t.Error("nil comparison: no error")
	}
}

// TestCompareShareCells: shares (failure rate, accuracy, session and
// task goodput) read as percentages and their changes as points, like
// accuracy's rows; latencies stay in ms.
func TestCompareShareCells(t *testing.T) {
	t.Parallel()
	tests := []struct {
		metric            string
		baseline, current string
		change            string
	}{
		// Overall session goodput 90% → 80%: ten points down.
		{"session_goodput", "90.00%", "80.00%", "-10.00 pp (-11.1%)"},
		// One class's task goodput, the same way.
		{"classes.agent.task_goodput", "90.00%", "80.00%", "-10.00 pp (-11.1%)"},
		// Accuracy, as before.
		{"accuracy", "90.00%", "80.00%", "-10.00 pp (-11.1%)"},
	}
	for _, tt := range tests {
		rel := -0.1 / 0.9
		d := analyze.Delta{Metric: tt.metric, Baseline: 0.9, Current: 0.8, Diff: -0.1, DiffLow: -0.12, DiffHigh: -0.08, Relative: &rel, Change: "worse"}
		cells := compareCells(&d)
		if cells[1] != tt.baseline || cells[2] != tt.current || cells[3] != tt.change {
			t.Errorf("%s: cells %q, want %s → %s, %s", tt.metric, cells, tt.baseline, tt.current, tt.change)
		}
	}
}
