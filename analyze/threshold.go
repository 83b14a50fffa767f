// Package analyze turns a run's figures into verdicts: threshold checks
// over summary metrics now; knee detection, capacity search and baseline
// comparison later. It reads record types and knows nothing of I/O formats.
package analyze

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/inferload/inferload/record"
)

// ErrThreshold marks a threshold expression that does not parse.
var ErrThreshold = errors.New("bad threshold")

// maxExprLen bounds an expression so a hostile plan cannot make parsing or
// error messages costly.
const maxExprLen = 256

// Threshold is one parsed k6-style check: a summary metric, a comparison
// and a limit, e.g. "ttft_ms.p99 < 2000".
type Threshold struct {
	// Expr is the expression as written (trimmed).
	Expr string
	// Metric is the dotted path into summary.json as written; it is
	// resolved against the summary when evaluated (see Resolve).
	Metric string
	// Op is one of <, <=, >, >=, ==, !=.
	Op string
	// Limit is the number the metric is compared with.
	Limit float64
}

// operators, longest first so "<=" is not read as "<" followed by "=".
var operators = []string{"<=", ">=", "==", "!=", "<", ">"}

// aliases are names people reach for that summary.json spells otherwise.
var aliases = map[string]string{
	"error_rate": "failure_rate",
}

// ParseThreshold parses "METRIC OP NUMBER". METRIC is a dotted path of
// lower-case names, digits and _ - (e.g. classes.short.ttft_ms.p95); NUMBER
// is a finite decimal or exponent number.
func ParseThreshold(expr string) (Threshold, error) {
	s := strings.TrimSpace(expr)
	if len(s) > maxExprLen {
		return Threshold{}, fmt.Errorf("%w: expression longer than %d bytes", ErrThreshold, maxExprLen)
	}
	i, op := findOperator(s)
	if i < 0 {
		return Threshold{}, fmt.Errorf("%w %q: want METRIC OP NUMBER with OP one of < <= > >= == != (e.g. ttft_ms.p99 < 2000)", ErrThreshold, s)
	}
	metric := strings.TrimSpace(s[:i])
	if err := checkMetric(metric); err != nil {
		return Threshold{}, fmt.Errorf("%w %q: %v", ErrThreshold, s, err)
	}
	limit, err := parseLimit(strings.TrimSpace(s[i+len(op):]))
	if err != nil {
		return Threshold{}, fmt.Errorf("%w %q: %v", ErrThreshold, s, err)
	}
	return Threshold{Expr: s, Metric: metric, Op: op, Limit: limit}, nil
}

// findOperator returns the position and spelling of the first comparison
// operator in s, or -1.
func findOperator(s string) (int, string) {
	for i := range len(s) {
		for _, op := range operators {
			if strings.HasPrefix(s[i:], op) {
				return i, op
			}
		}
	}
	return -1, ""
}

func checkMetric(m string) error {
	if m == "" {
		return errors.New("no metric before the operator")
	}
	for _, seg := range strings.Split(m, ".") {
		if seg == "" {
			return fmt.Errorf("metric %q has an empty path segment", m)
		}
		for _, c := range seg {
			if !isNameRune(c) {
				return fmt.Errorf("metric %q: %q is not allowed (use letters, digits, _ and -)", m, c)
			}
		}
	}
	return nil
}

func isNameRune(c rune) bool {
	return c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func parseLimit(s string) (float64, error) {
	if s == "" {
		return 0, errors.New("no number after the operator")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(s, "xXpP_") {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return f, nil
}

// ParseThresholds parses each expression, naming the position of a bad one.
func ParseThresholds(exprs []string) ([]Threshold, error) {
	out := make([]Threshold, 0, len(exprs))
	for i, e := range exprs {
		t, err := ParseThreshold(e)
		if err != nil {
			return nil, fmt.Errorf("threshold %d: %w", i+1, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// holds reports whether value passes t.
func (t Threshold) holds(value float64) bool {
	switch t.Op {
	case "<":
		return value < t.Limit
	case "<=":
		return value <= t.Limit
	case ">":
		return value > t.Limit
	case ">=":
		return value >= t.Limit
	case "==":
		return value == t.Limit
	default:
		return value != t.Limit
	}
}

// Evaluate checks every threshold against s. A metric that resolves to
// nothing, or to more than one figure, fails with the reason in Error: a
// gate that cannot be checked must not pass silently.
func Evaluate(ths []Threshold, s *record.Summary) ([]record.ThresholdResult, error) {
	figures, err := Figures(s)
	if err != nil {
		return nil, err
	}
	out := make([]record.ThresholdResult, 0, len(ths))
	for _, t := range ths {
		r := record.ThresholdResult{Expr: t.Expr}
		path, v, err := Resolve(figures, t.Metric)
		if err != nil {
			r.Error = err.Error()
		} else {
			r.Metric, r.Value, r.Passed = path, v, t.holds(v)
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
	if a, ok := aliases[metric]; ok {
		metric = a
	}
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
