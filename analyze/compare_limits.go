package analyze

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// ErrLimit marks a regression limit that does not parse.
var ErrLimit = errors.New("bad regression limit")

// Limit is how much worse one figure may get before a comparison fails:
// "e2e_ms.p99=10%" (relative to the baseline) or "failure_rate=0.01"
// (absolute, in the figure's own unit). A delta beyond its limit only
// fails when it is also significant; the limits split the comparison's
// error rate between them (Bonferroni, see comparer.level).
type Limit struct {
	// Metric is a Delta.Metric, e.g. "ttft_ms.p99" or
	// "classes.short.e2e_ms.p95".
	Metric string
	// Relative is the allowed worsening as a fraction of the baseline
	// (0.1 for 10%); used when Absolute is false.
	Relative float64
	// Absolute: Value is in the figure's unit (ms, per second, rate).
	Absolute bool
	Value    float64
	// Off removes a default limit on Metric.
	Off bool
}

// DefaultLimits fail a comparison when P99 TTFT, ITL or E2E latency, or
// output token throughput, is significantly more than 10% worse.
func DefaultLimits() []Limit {
	return []Limit{
		{Metric: "ttft_ms.p99", Relative: 0.10},
		{Metric: "itl_ms.p99", Relative: 0.10},
		{Metric: "e2e_ms.p99", Relative: 0.10},
		{Metric: "output_tokens_per_s", Relative: 0.10},
	}
}

// limitMetric is what a limit may name: a latency percentile, the
// failure rate, the graded accuracy or session or task goodput overall or
// per class, or an overall throughput.
var limitMetric = regexp.MustCompile(`^(classes\.[A-Za-z0-9_-]+\.)?((ttft|itl|tpot|e2e|ttfo|session|task)_ms\.p(50|90|95|99)|failure_rate|accuracy|session_goodput|task_goodput)$|^classes\.[A-Za-z0-9_-]+\.nodes\.[A-Za-z0-9._-]+\.latency_ms\.p(50|90|95|99)$|^(output_tokens|requests)_per_s$`)

// ParseLimit parses KEY=VALUE with VALUE a percentage ("10%"), a
// non-negative number in the figure's unit, or "off".
func ParseLimit(s string) (Limit, error) {
	key, val, ok := strings.Cut(strings.TrimSpace(s), "=")
	key, val = strings.TrimSpace(key), strings.TrimSpace(val)
	if !ok || key == "" || val == "" {
		return Limit{}, fmt.Errorf("%w %q: want METRIC=VALUE, e.g. e2e_ms.p99=10%% or failure_rate=0.01", ErrLimit, s)
	}
	if key == "error_rate" {
		key = "failure_rate"
	}
	if !limitMetric.MatchString(key) {
		return Limit{}, fmt.Errorf("%w %q: unknown figure %q (want e.g. ttft_ms.p99, classes.NAME.e2e_ms.p95, ttfo_ms.p90, session_ms.p90, task_ms.p90, classes.NAME.nodes.NODE.latency_ms.p90, output_tokens_per_s, requests_per_s, failure_rate, accuracy, session_goodput, task_goodput)", ErrLimit, s, key)
	}
	l := Limit{Metric: key}
	if val == "off" {
		l.Off = true
		return l, nil
	}
	num, isPct := strings.CutSuffix(val, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return Limit{}, fmt.Errorf("%w %q: %q is not a non-negative number or percentage", ErrLimit, s, val)
	}
	if isPct {
		l.Relative = v / 100
	} else {
		l.Absolute, l.Value = true, v
	}
	return l, nil
}

// String writes the limit back as KEY=VALUE.
func (l Limit) String() string {
	return l.Metric + "=" + l.value()
}

func (l Limit) value() string {
	switch {
	case l.Off:
		return "off"
	case l.Absolute:
		return strconv.FormatFloat(l.Value, 'g', -1, 64)
	}
	return strconv.FormatFloat(l.Relative*100, 'g', -1, 64) + "%"
}

// WithDefaults overlays limits on DefaultLimits: a limit replaces the
// default on the same figure, "off" removes it.
func WithDefaults(limits []Limit) []Limit {
	return overlay(DefaultLimits(), limits)
}

// overlay applies over on base, keeping base's order and appending new
// figures in the order given; Off entries are dropped.
func overlay(base, over []Limit) []Limit {
	out := append([]Limit(nil), base...)
	for _, l := range over {
		i := indexLimit(out, l.Metric)
		if i < 0 {
			out = append(out, l)
		} else {
			out[i] = l
		}
	}
	kept := []Limit{}
	for _, l := range out {
		if !l.Off {
			kept = append(kept, l)
		}
	}
	return kept
}

func indexLimit(ls []Limit, metric string) int {
	for i, l := range ls {
		if l.Metric == metric {
			return i
		}
	}
	return -1
}

// applyLimits marks the deltas that regressed and records the limits.
func applyLimits(c *Comparison, limits []Limit) {
	limits = overlay(nil, limits)
	for _, l := range limits {
		c.Limits = append(c.Limits, l.String())
		i := indexDelta(c.Deltas, l.Metric)
		if i < 0 {
			c.UnusedLimits = append(c.UnusedLimits, l.String())
			continue
		}
		d := &c.Deltas[i]
		d.Limit = l.value()
		d.Regression = d.Change == "worse" && l.exceeded(d)
		if d.Regression {
			c.Regressions++
		}
	}
}

func indexDelta(ds []Delta, metric string) int {
	for i := range ds {
		if ds[i].Metric == metric {
			return i
		}
	}
	return -1
}

// exceeded says whether a worse delta may be beyond the limit: the worse
// end of its interval is (the data do not rule out a worsening as large
// as the limit). A significant 2% rise measured to ±1% passes a 10%
// limit; a true 10% rise, whose interval reaches past 10% whenever it is
// significant, fails it. A relative limit against a zero baseline is
// exceeded by any worsening.
func (l Limit) exceeded(d *Delta) bool {
	worse := max(math.Abs(d.DiffLow), math.Abs(d.DiffHigh))
	if d.Runs != nil && !d.Runs.TooFew {
		// The runs check's interval is the wider account of the noise:
		// its worse end counts too.
		worse = max(worse, math.Abs(d.Runs.DiffLow), math.Abs(d.Runs.DiffHigh))
	}
	if l.Absolute {
		return worse > l.Value
	}
	if d.Baseline == 0 {
		return worse > 0
	}
	return worse/math.Abs(d.Baseline) > l.Relative
}
