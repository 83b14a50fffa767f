// Package analyze turns a run's figures into verdicts: threshold checks
// over summary metrics now; knee detection, capacity search and baseline
// comparison later. It reads record types and knows nothing of I/O formats.
package analyze

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/inferload/inferload/record"
)

// Evaluate checks every threshold against s. A metric that resolves to
// nothing, or to more than one figure, fails with the reason in Error: a
// gate that cannot be checked must not pass silently. So does a
// percentile its sample count does not back (unbacked): a P99 from 32
// requests is their maximum, a gate on it passes or fails on one request.
func Evaluate(ths []record.Threshold, s *record.Summary) ([]record.ThresholdResult, error) {
	figures, err := Figures(s)
	if err != nil {
		return nil, err
	}
	out := make([]record.ThresholdResult, 0, len(ths))
	for _, t := range ths {
		r := record.ThresholdResult{Expr: t.Expr}
		path, v, err := Resolve(figures, t.Metric)
		switch {
		case err != nil:
			r.Error = err.Error()
		default:
			r.Metric, r.Value, r.Passed = path, v, t.Holds(v)
			if why := unbacked(figures, path); why != "" {
				r.Passed, r.Error = false, fmt.Sprintf("%s = %.4g %s", path, v, why)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// Figures flattens every number in summary.json into dotted paths
// ("metrics.ttft_ms.p99"). It goes through the JSON encoding so that fields
// other packages add to Summary (classes, steps) are found without this
// package knowing them; array elements are numbered ("steps.0.…").
func Figures(s *record.Summary) (map[string]float64, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("thresholds: encode summary: %w", err)
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, fmt.Errorf("thresholds: decode summary: %w", err)
	}
	out := make(map[string]float64)
	flatten(out, "", tree)
	return out, nil
}

// unbacked says why the figure at path is a percentile its own sample
// count (the count beside it: metrics.ttft_ms.count for
// metrics.ttft_ms.p99) does not back at DefaultConfidence, as the tables'
// "*" does; "" when it is backed or no percentile of a distribution.
func unbacked(figures map[string]float64, path string) string {
	prefix, name, ok := cutLast(path)
	if !ok {
		return ""
	}
	q, isPct := record.PercentileQ(name)
	n, hasCount := figures[prefix+".count"]
	if !isPct || !hasCount {
		return ""
	}
	need := MinSamples(q, DefaultConfidence)
	if int(n) >= need {
		return ""
	}
	advice := "lengthen the run"
	if b := Backed(int64(n), DefaultConfidence); b != "none" {
		advice += ", or gate the " + b + " its samples back"
	}
	return fmt.Sprintf("rests on %d samples, too few to back a %s at %.0f%% confidence (%d needed): %s (docs/report.md, \"How long a CI run must be\")",
		int(n), name, DefaultConfidence*100, need, advice)
}

// cutLast splits a dotted path at its last dot.
func cutLast(path string) (prefix, last string, ok bool) {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return "", "", false
	}
	return path[:i], path[i+1:], true
}

func flatten(out map[string]float64, prefix string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			flatten(out, joinPath(prefix, k), sub)
		}
	case []any:
		for i, sub := range v {
			flatten(out, joinPath(prefix, strconv.Itoa(i)), sub)
		}
	case float64:
		out[prefix] = v
	case bool:
		out[prefix] = 0
		if v {
			out[prefix] = 1
		}
	}
}

func joinPath(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// Resolve finds the one figure a metric names. An exact path wins.
// Otherwise the metric's segments must appear in order within a figure's
// path, ending on its last segment. A match that merely repeats another
// match one level down (classes.x.metrics.ttft_ms.p99 repeats
// metrics.ttft_ms.p99) gives way to it, so a short name means the overall
// figure; any other tie is ambiguous:
//
//	ttft_ms.p99               -> metrics.ttft_ms.p99
//	output_tokens_per_s       -> throughput.output_tokens_per_s
//	classes.short.ttft_ms.p95 -> classes.short.metrics.ttft_ms.p95
//	p99                       -> ambiguous: failed_e2e_ms.p99, metrics.e2e_ms.p99, …
func Resolve(figures map[string]float64, metric string) (string, float64, error) {
	if v, ok := figures[metric]; ok {
		return metric, v, nil
	}
	want := strings.Split(metric, ".")
	var matches []string
	for path := range figures {
		if subsequence(strings.Split(path, "."), want) {
			matches = append(matches, path)
		}
	}
	best := outermost(matches)
	switch len(best) {
	case 0:
		return "", 0, fmt.Errorf("no summary figure matches %q (see docs/summary.md)", metric)
	case 1:
		return best[0], figures[best[0]], nil
	}
	if len(best) > 4 {
		best = append(best[:4], "…")
	}
	return "", 0, fmt.Errorf("%q is ambiguous: it matches %s; write more of the path", metric, strings.Join(best, ", "))
}

// outermost drops every path that ends with another path of the list, in
// sorted order.
func outermost(paths []string) []string {
	slices.Sort(paths)
	var out []string
	for _, p := range paths {
		nested := slices.ContainsFunc(paths, func(q string) bool { return strings.HasSuffix(p, "."+q) })
		if !nested {
			out = append(out, p)
		}
	}
	return out
}

// subsequence reports whether want appears in order within have, with the
// last segments equal.
func subsequence(have, want []string) bool {
	if len(want) > len(have) || have[len(have)-1] != want[len(want)-1] {
		return false
	}
	j := 0
	for _, h := range have {
		if j < len(want) && h == want[j] {
			j++
		}
	}
	return j == len(want)
}

// Failed counts the results that did not pass.
func Failed(results []record.ThresholdResult) int {
	n := 0
	for _, r := range results {
		if !r.Passed {
			n++
		}
	}
	return n
}
