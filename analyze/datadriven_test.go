package analyze_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/internal/ddtest"
	"github.com/inferload/inferload/record"
)

// TestDataDriven reads the verdicts as data: testdata/verdicts/* hold the
// inputs of the knee, the thresholds, the capacity search and the binomial
// sample rule, and what each must conclude. Refresh the expected outputs
// with
//
//	go test ./analyze/ -run DataDriven -rewrite
//
// and review the diff. Directives:
//
//	knee [gain=F] [growth=F] [fraction=F] [percentile=pNN]
//	    input: one step a line, "INDEX KIND MODE TARGET key=value… [invalid]"
//	    with KIND step or ramp, MODE closed or open, keys tok/s and req/s
//	    (throughput), ttft and e2e (ms at every percentile) or ttft.pNN and
//	    e2e.pNN (one percentile).
//	thresholds
//	    input: "figure PATH=VALUE" lines build a summary (PATH as in
//	    summary.json, e.g. metrics.ttft_ms.p99), every other line is one
//	    threshold expression.
//	next-load low=F high=F [whole] [precision=F] [max-probes=N]
//	    input: "passed L,L,…" and "failed L,L,…"; prints the next load or
//	    that the search is done, with the capacity.
//	search low=F high=F capacity=F [whole] [precision=F] [max-probes=N]
//	    runs NextLoad against a server whose true capacity is known: a probe
//	    passes when its load is at most capacity. Prints every probe and the
//	    answer.
//	min-samples confidence=F
//	    input: quantiles, one a line.
//	backed confidence=F
//	    input: sample counts, one a line.
//	slo-holds confidence=F q=F
//	    input: "N EXCEED" lines: whether the q-quantile is within the bound.
func TestDataDriven(t *testing.T) {
	ddtest.Run(t, "testdata/verdicts", map[string]ddtest.Case{
		"knee":        kneeCase,
		"thresholds":  thresholdsCase,
		"next-load":   nextLoadCase,
		"search":      searchCase,
		"min-samples": minSamplesCase,
		"backed":      backedCase,
		"slo-holds":   sloHoldsCase,
	})
}

func kneeCase(t *testing.T, d *datadriven.TestData) string {
	var o analyze.KneeOptions
	d.MaybeScanArgs(t, "gain", &o.ThroughputGain)
	d.MaybeScanArgs(t, "growth", &o.LatencyGrowth)
	d.MaybeScanArgs(t, "fraction", &o.OperatingFraction)
	d.MaybeScanArgs(t, "percentile", &o.Percentile)
	var steps []record.Step
	for _, line := range lines(d.Input) {
		steps = append(steps, parseStep(t, d, strings.Fields(line)))
	}
	k, err := analyze.FindKnee(steps, o)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var b strings.Builder
	if k.Found {
		fmt.Fprintf(&b, "knee: %g %s (steps %v), recommended %g\n", k.Load, k.Mode, k.Evidence, k.Recommended)
	} else {
		fmt.Fprintf(&b, "no knee\n")
	}
	fmt.Fprintf(&b, "reason: %s\n", k.Reason)
	return b.String()
}

// parseStep reads "INDEX KIND MODE TARGET key=value… [invalid]".
func parseStep(t *testing.T, d *datadriven.TestData, f []string) record.Step {
	if len(f) < 4 {
		d.Fatalf(t, "step %q: want INDEX KIND MODE TARGET key=value…", strings.Join(f, " "))
	}
	s := record.Step{Index: int(parseNum(t, d, f[0])), Kind: f[1], Mode: f[2], Target: parseNum(t, d, f[3]),
		Validity: record.Validity{Valid: true}}
	if s.Kind != record.StepConstant && s.Kind != record.StepRamp {
		d.Fatalf(t, "step %s: kind %q is neither %s nor %s", f[0], s.Kind, record.StepConstant, record.StepRamp)
	}
	for _, w := range f[4:] {
		if w == "invalid" {
			s.Validity.Valid = false
			continue
		}
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			d.Fatalf(t, "step %s: %q is not key=value", f[0], w)
		}
		n := parseNum(t, d, v)
		metric, pct, _ := strings.Cut(k, ".")
		switch metric {
		case "tok/s":
			s.Throughput.OutputTokensPerS = n
		case "req/s":
			s.Throughput.RequestsPerS = n
		case "ttft":
			setStat(t, d, &s.Metrics.TTFT, pct, n)
		case "e2e":
			setStat(t, d, &s.Metrics.E2E, pct, n)
		default:
			d.Fatalf(t, "step %s: unknown key %q", f[0], k)
		}
	}
	return s
}

// setStat sets one percentile of st, or every one when pct is empty.
func setStat(t *testing.T, d *datadriven.TestData, st *record.Stats, pct string, v float64) {
	fields := map[string]*float64{"p50": &st.P50, "p90": &st.P90, "p95": &st.P95, "p99": &st.P99, "p999": &st.P999}
	if pct == "" {
		for _, p := range fields {
			*p = v
		}
		return
	}
	p, ok := fields[pct]
	if !ok {
		d.Fatalf(t, "unknown percentile %q", pct)
	}
	*p = v
}

func thresholdsCase(t *testing.T, d *datadriven.TestData) string {
	tree := map[string]any{"schema_version": record.SchemaVersion}
	var exprs []string
	for _, line := range lines(d.Input) {
		if rest, ok := strings.CutPrefix(line, "figure "); ok {
			path, v, ok := strings.Cut(strings.TrimSpace(rest), "=")
			if !ok {
				d.Fatalf(t, "figure %q: want PATH=VALUE", rest)
			}
			setPath(t, d, tree, strings.Split(path, "."), parseNum(t, d, v))
			continue
		}
		exprs = append(exprs, line)
	}
	// The summary goes through its JSON encoding, as summary.json would.
	raw, err := json.Marshal(tree)
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	var s record.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		d.Fatalf(t, "figures do not make a summary: %v", err)
	}
	ths, err := record.ParseThresholds(exprs)
	if err != nil {
		return "parse error: " + err.Error() + "\n"
	}
	results, err := analyze.Evaluate(ths, &s)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var b strings.Builder
	for _, r := range results {
		switch {
		case r.Error != "":
			fmt.Fprintf(&b, "FAIL %s: %s\n", r.Expr, r.Error)
		case r.Passed:
			fmt.Fprintf(&b, "PASS %s (%s = %g)\n", r.Expr, r.Metric, r.Value)
		default:
			fmt.Fprintf(&b, "FAIL %s (%s = %g)\n", r.Expr, r.Metric, r.Value)
		}
	}
	fmt.Fprintf(&b, "failed: %d of %d\n", analyze.Failed(results), len(results))
	return b.String()
}

// setPath sets tree[p0][p1]…= v, making maps on the way.
func setPath(t *testing.T, d *datadriven.TestData, tree map[string]any, path []string, v float64) {
	for _, seg := range path[:len(path)-1] {
		sub, ok := tree[seg].(map[string]any)
		if !ok {
			if _, taken := tree[seg]; taken {
				d.Fatalf(t, "figure %s: %q is already a number", strings.Join(path, "."), seg)
			}
			sub = map[string]any{}
			tree[seg] = sub
		}
		tree = sub
	}
	tree[path[len(path)-1]] = v
}

func searchOptions(t *testing.T, d *datadriven.TestData) analyze.SearchOptions {
	var o analyze.SearchOptions
	d.ScanArgs(t, "low", &o.Low)
	d.ScanArgs(t, "high", &o.High)
	o.Whole = d.HasArg("whole")
	d.MaybeScanArgs(t, "precision", &o.Precision)
	d.MaybeScanArgs(t, "max-probes", &o.MaxProbes)
	return o
}

func nextLoadCase(t *testing.T, d *datadriven.TestData) string {
	o := searchOptions(t, d)
	var passed, failed []float64
	for _, line := range lines(d.Input) {
		kind, list, _ := strings.Cut(line, " ")
		var loads []float64
		for _, s := range strings.Split(strings.TrimSpace(list), ",") {
			if s != "" {
				loads = append(loads, parseNum(t, d, s))
			}
		}
		switch kind {
		case "passed":
			passed = append(passed, loads...)
		case "failed":
			failed = append(failed, loads...)
		default:
			d.Fatalf(t, "want passed or failed, not %q", kind)
		}
	}
	next, done := analyze.NextLoad(passed, failed, o)
	if done {
		return fmt.Sprintf("done: capacity %g\n", analyze.Capacity(passed, failed))
	}
	return fmt.Sprintf("next: %g\n", next)
}

func searchCase(t *testing.T, d *datadriven.TestData) string {
	o := searchOptions(t, d)
	var capacity float64
	d.ScanArgs(t, "capacity", &capacity)
	var passed, failed []float64
	var b strings.Builder
	for range 100 { // NextLoad must end the search long before this
		next, done := analyze.NextLoad(passed, failed, o)
		if done {
			fmt.Fprintf(&b, "capacity: %g after %d probes\n", analyze.Capacity(passed, failed), len(passed)+len(failed))
			return b.String()
		}
		if next <= capacity {
			passed = append(passed, next)
			fmt.Fprintf(&b, "probe %g: pass\n", next)
		} else {
			failed = append(failed, next)
			fmt.Fprintf(&b, "probe %g: fail\n", next)
		}
	}
	d.Fatalf(t, "the search did not end in 100 probes:\n%s", b.String())
	return ""
}

func minSamplesCase(t *testing.T, d *datadriven.TestData) string {
	var c float64
	d.ScanArgs(t, "confidence", &c)
	var b strings.Builder
	for _, line := range lines(d.Input) {
		n := analyze.MinSamples(parseNum(t, d, line), c)
		if n == math.MaxInt {
			fmt.Fprintf(&b, "q=%s: never\n", line)
			continue
		}
		fmt.Fprintf(&b, "q=%s: %d\n", line, n)
	}
	return b.String()
}

func backedCase(t *testing.T, d *datadriven.TestData) string {
	var c float64
	d.ScanArgs(t, "confidence", &c)
	var b strings.Builder
	for _, line := range lines(d.Input) {
		fmt.Fprintf(&b, "n=%s: %s\n", line, analyze.Backed(int64(parseNum(t, d, line)), c))
	}
	return b.String()
}

func sloHoldsCase(t *testing.T, d *datadriven.TestData) string {
	var c, q float64
	d.ScanArgs(t, "confidence", &c)
	d.ScanArgs(t, "q", &q)
	var b strings.Builder
	for _, line := range lines(d.Input) {
		f := strings.Fields(line)
		if len(f) != 2 {
			d.Fatalf(t, "%q: want N EXCEED", line)
		}
		n, exceed := int(parseNum(t, d, f[0])), int(parseNum(t, d, f[1]))
		k, ok := analyze.UpperBoundRank(n, q, c)
		verdict := "not enough samples"
		if ok {
			verdict = fmt.Sprintf("at most %d may exceed", n-k)
		}
		fmt.Fprintf(&b, "n=%d exceed=%d: holds=%v (%s)\n", n, exceed, analyze.SLOHolds(n, exceed, q, c), verdict)
	}
	return b.String()
}

// lines are the input's non-empty lines, trimmed.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func parseNum(t *testing.T, d *datadriven.TestData, s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		d.Fatalf(t, "%q is not a number", s)
	}
	return v
}
