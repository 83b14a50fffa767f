package record

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrThreshold marks an expression of the threshold language that does
// not parse.
var ErrThreshold = errors.New("bad threshold")

// maxExprLen bounds an expression so a hostile plan cannot make parsing or
// error messages costly.
const maxExprLen = 256

// Threshold is one expression of inferload's threshold language, the one
// grammar of the plan's thresholds, --threshold, and the SLOs of
// find-capacity and fleet (ParseSLO): "METRIC OP LIMIT", e.g.
// "ttft_ms.p99 < 2000", "ttft.p99 <= 2s" or "failure_rate < 1%".
// docs/plan.md#thresholds defines it for users.
type Threshold struct {
	// Expr is the expression as written (trimmed).
	Expr string
	// Metric is the dotted path into summary.json, with aliases and the
	// short latency names spelled as summary.json does (error_rate is
	// failure_rate, ttft.p99 is ttft_ms.p99); it is
	// resolved against the summary when evaluated (analyze.Resolve).
	Metric string
	// Op is one of <, <=, >, >=, ==, !=.
	Op string
	// Limit is the number the metric is compared with, in the metric's
	// own unit: a duration limit ("2s") on a _ms figure is 2000.
	Limit float64
}

// operators, longest first so "<=" is not read as "<" followed by "=".
var operators = []string{"<=", ">=", "==", "!=", "<", ">"}

// latencyNames are the short names of the latency figures, each the
// summary.json name without its unit (ttft for ttft_ms); a short name is
// read as the figure only where a statistic follows it (ttft.p99), so a
// class named "ttft" stays a class.
var latencyNames = map[string]string{"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2e": "e2e_ms",
	"ttfr": "ttfr_ms", "ttfo": "ttfo_ms"}

// ParseThreshold parses "METRIC OP LIMIT". METRIC is a dotted path of
// names of letters, digits, _ and - (e.g. classes.short.ttft_ms.p95, or
// classes.short.ttft.p95); LIMIT is a finite number in the metric's unit,
// a duration (2s, 150ms) on a figure in ms, s or µs (a path segment
// ending in _ms, _s or _us), or a percentage (1%) read as a fraction.
func ParseThreshold(expr string) (Threshold, error) {
	s := strings.TrimSpace(expr)
	if len(s) > maxExprLen {
		return Threshold{}, fmt.Errorf("%w: expression longer than %d bytes", ErrThreshold, maxExprLen)
	}
	i, op := findOperator(s)
	if i < 0 {
		return Threshold{}, fmt.Errorf("%w %q: want METRIC OP LIMIT with OP one of < <= > >= == != (e.g. ttft_ms.p99 < 2000 or ttft.p99 < 2s)", ErrThreshold, s)
	}
	metric := strings.TrimSpace(s[:i])
	if err := checkMetric(metric); err != nil {
		return Threshold{}, fmt.Errorf("%w %q: %v", ErrThreshold, s, err)
	}
	metric = canonicalMetric(metric)
	limit, err := parseLimit(strings.TrimSpace(s[i+len(op):]), metric)
	if err != nil {
		return Threshold{}, fmt.Errorf("%w %q: %v", ErrThreshold, s, err)
	}
	return Threshold{Expr: s, Metric: metric, Op: op, Limit: limit}, nil
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

// Holds reports whether value passes t.
func (t Threshold) Holds(value float64) bool {
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

// metricAliases are whole names people reach for that summary.json
// spells otherwise.
var metricAliases = map[string]string{"error_rate": "failure_rate"}

// canonicalMetric spells a metric as summary.json does: an alias as its
// figure (error_rate is failure_rate), a short latency name followed by a
// statistic with its unit (ttft.p99 is ttft_ms.p99).
func canonicalMetric(m string) string {
	if a, ok := metricAliases[m]; ok {
		return a
	}
	segs := strings.Split(m, ".")
	for i := 0; i+1 < len(segs); i++ {
		if long, ok := latencyNames[segs[i]]; ok && isStatistic(segs[i+1]) {
			segs[i] = long
		}
	}
	return strings.Join(segs, ".")
}

// isStatistic reports whether seg names one of a distribution's figures
// in summary.json (p50 ... p999, mean, min, max).
func isStatistic(seg string) bool {
	if seg == "mean" || seg == "min" || seg == "max" {
		return true
	}
	if len(seg) < 2 || seg[0] != 'p' {
		return false
	}
	_, err := strconv.ParseUint(seg[1:], 10, 16)
	return err == nil
}

// parseLimit reads a limit in metric's unit: a plain number, a percentage
// or a duration on a figure with a time unit.
func parseLimit(s, metric string) (float64, error) {
	if s == "" {
		return 0, errors.New("no limit after the operator")
	}
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		f, err := parseNumber(pct)
		if err != nil {
			return 0, fmt.Errorf("%q is not a finite percentage", s)
		}
		return f / 100, nil
	}
	if f, err := parseNumber(s); err == nil {
		return f, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("%q is not a finite number, a duration (2s, 150ms) or a percentage (1%%)", s)
	}
	unit, ok := timeUnit(metric)
	if !ok {
		return 0, fmt.Errorf("%q is a duration, but %s has no time unit (a figure in ms, s or µs ends in _ms, _s or _us)", s, metric)
	}
	return float64(d) / float64(unit), nil
}

// parseNumber reads a finite decimal or exponent number; hex floats and
// underscores are Go syntax, not plan syntax.
func parseNumber(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(s, "xXpP_") {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return f, nil
}

// timeUnit is the unit of metric's figure: that of its last path segment
// named with one (ttft_ms.p99 in ms, window_s in s).
func timeUnit(metric string) (time.Duration, bool) {
	segs := strings.Split(metric, ".")
	for i := len(segs) - 1; i >= 0; i-- {
		switch {
		case strings.HasSuffix(segs[i], "_ms"):
			return time.Millisecond, true
		case strings.HasSuffix(segs[i], "_us"):
			return time.Microsecond, true
		case strings.HasSuffix(segs[i], "_s"):
			return time.Second, true
		}
	}
	return 0, false
}
