package record

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
)

// SLO is the one service-level objective type: per-request latency bounds
// in milliseconds, and for a capacity objective the share of requests that
// must meet them. Goodput judges each request by its class's SLO (SLOs);
// a capacity search asks that at least Share of a probe's requests meet
// it, which is the percentile form: "ttft.p99<=2s" is {TTFTMs: 2000,
// Share: 0.99}. A zero bound is not checked, so the zero SLO is met by
// every success. docs/metrics.md#goodput defines it for users.
type SLO struct {
	// TTFTMs bounds the time to first token (a non-streamed reply's TTFT
	// is its E2E).
	TTFTMs float64 `json:"ttft_ms" yaml:"ttft_ms"`
	// TPOTMs bounds the time per output token (TPOTUS); replies without
	// one are not checked on it.
	TPOTMs float64 `json:"tpot_ms" yaml:"tpot_ms"`
	// E2EMs bounds the end-to-end latency.
	E2EMs float64 `json:"e2e_ms" yaml:"e2e_ms"`
	// TTFOMs bounds the time to the first answer token (TTFOUSOf): a
	// reasoning model's first token of its answer, not of its reasoning;
	// a reply that did not reason has its TTFT there. A reasoning reply
	// cut off before it answered misses it.
	TTFOMs float64 `json:"ttfo_ms,omitempty" yaml:"ttfo_ms"`
	// Share is, in a capacity objective, the fraction of measured requests
	// that must meet the bounds (0.99 for a p99). Goodput judges requests
	// one by one and leaves it 0; a plan has no field for it.
	Share float64 `json:"share,omitempty" yaml:"-"`
	// Class, in a capacity objective, is the request class it judges
	// ("chat:ttft.p90<=500ms"); "" judges every request. A sweep turns
	// each class's goodput SLO into one (plan.Workload.Objectives), so a
	// class that misses is not hidden by the others.
	Class string `json:"class,omitempty" yaml:"-"`
}

// Over returns s with each of its unset bounds taken from base: a class
// that sets only ttft_ms keeps the run's tpot_ms and e2e_ms.
func (s SLO) Over(base SLO) SLO {
	pick := func(v, def float64) float64 {
		if v > 0 {
			return v
		}
		return def
	}
	return SLO{TTFTMs: pick(s.TTFTMs, base.TTFTMs), TPOTMs: pick(s.TPOTMs, base.TPOTMs),
		E2EMs: pick(s.E2EMs, base.E2EMs), TTFOMs: pick(s.TTFOMs, base.TTFOMs), Share: pick(s.Share, base.Share), Class: s.Class}
}

// Bounded reports whether s sets any latency bound (the zero SLO, met by
// every success, sets none).
func (s SLO) Bounded() bool { return s.TTFTMs > 0 || s.TPOTMs > 0 || s.E2EMs > 0 || s.TTFOMs > 0 }

// Met reports whether r met every bound of s: it must have succeeded, and
// its bounds are checked as Judge checks them.
func (s SLO) Met(r *Result) bool {
	met, _ := s.Judge(r)
	return met
}

// Judge reports whether r met every bound of s, and whether any bound of s
// applied to r at all. A failure is judged and never meets. For a success,
// a non-streamed reply (or one without a content event) has no first
// token before its end, so its TTFT is its E2E; TPOT is checked only where
// TPOTUS has one. So judged is false only for a success without a TPOT
// under an SLO that bounds TPOT alone, which a capacity search leaves out
// of its count rather than count it as met. An objective of one Class
// does not judge another class's requests.
func (s SLO) Judge(r *Result) (met, judged bool) {
	if s.Class != "" && r.Class != s.Class {
		return false, false
	}
	if !r.OK() {
		return false, true
	}
	met = true
	check := func(boundMs float64, us int64) {
		if boundMs > 0 {
			judged = true
			met = met && float64(us) <= boundMs*1000
		}
	}
	ttft := r.TTFTUS
	if !r.Stream || ttft <= 0 {
		ttft = r.E2EUS
	}
	check(s.TTFTMs, ttft)
	check(s.E2EMs, r.E2EUS)
	if s.TTFOMs > 0 {
		ttfo, ok := TTFOUSOf(r)
		if !ok && r.ReasoningEvents <= 0 { // not streamed: its answer comes whole, at its end
			ttfo, ok = r.E2EUS, true
		}
		judged = true
		met = met && ok && float64(ttfo) <= s.TTFOMs*1000
	}
	if tpot, ok := TPOTUS(r); ok {
		check(s.TPOTMs, tpot)
	}
	return met, judged
}

// Percentile is the name of s's Share as reports name percentiles ("p99"),
// or the share as a percentage when it is not one of Percentiles.
func (s SLO) Percentile() string {
	for _, p := range Percentiles {
		if p.Q == s.Share {
			return p.Name
		}
	}
	return fmt.Sprintf("%g%%", s.Share*100)
}

// String is the objective as reports show it: "TTFT p99 ≤ 2s" for a
// capacity objective, "TTFT ≤ 2s, TPOT ≤ 100ms" for a per-request one.
func (s SLO) String() string {
	var parts []string
	for _, b := range []struct {
		name string
		ms   float64
	}{{"TTFT", s.TTFTMs}, {"TTFO", s.TTFOMs}, {"TPOT", s.TPOTMs}, {"E2E", s.E2EMs}} {
		if b.ms <= 0 {
			continue
		}
		name := b.name
		if s.Share > 0 {
			name += " " + s.Percentile()
		}
		parts = append(parts, fmt.Sprintf("%s ≤ %s", name, time.Duration(math.Round(b.ms*1e6))))
	}
	if len(parts) == 0 {
		return "no bound"
	}
	if s.Class != "" {
		return s.Class + ": " + strings.Join(parts, ", ")
	}
	return strings.Join(parts, ", ")
}

// Exprs writes a capacity objective back in the language ParseSLO reads,
// one expression per bound ("chat:ttft.p90<=500ms"), for a command line
// that reruns it: a sweep's advice to run find-capacity quotes them.
func (s SLO) Exprs() []string {
	prefix := ""
	if s.Class != "" {
		prefix = s.Class + ":"
	}
	var out []string
	for _, b := range []struct {
		name string
		ms   float64
	}{{"ttft", s.TTFTMs}, {"ttfo", s.TTFOMs}, {"tpot", s.TPOTMs}, {"e2e", s.E2EMs}} {
		if b.ms > 0 {
			out = append(out, fmt.Sprintf("%s%s.%s<=%s", prefix, b.name, s.Percentile(), time.Duration(math.Round(b.ms*1e6))))
		}
	}
	return out
}

// sloMetric is what a capacity objective bounds: a latency figure's
// percentile (after the threshold language's short names: ttft.p99 is
// ttft_ms.p99).
var sloMetric = regexp.MustCompile(`^(ttft|ttfo|tpot|e2e)_ms\.(p[0-9]+)$`)

// ParseSLO reads a capacity objective, an expression of the threshold
// language (ParseThreshold) that bounds a latency percentile from above:
// "METRIC.PERCENTILE <= LIMIT" with METRIC ttft, ttfo, tpot or e2e (or ttft_ms,
// ...), PERCENTILE one of Percentiles and LIMIT a duration or a number of
// ms, e.g. "ttft.p99<=2s", "tpot.p99 <= 100ms" or "ttft_ms.p99 <= 2000":
// the SLO bounding that metric, with the percentile as its Share. A
// "CLASS:" prefix ("chat:ttft.p90<=500ms") judges only that request
// class's requests.
func ParseSLO(s string) (SLO, error) {
	class, expr, found := strings.Cut(s, ":")
	if !found {
		class, expr = "", s
	} else if class = strings.TrimSpace(class); class == "" {
		return SLO{}, fmt.Errorf("SLO %q: empty class before \":\" (want CLASS:METRIC.PERCENTILE<=DURATION, e.g. chat:ttft.p90<=500ms)", s)
	}
	o, err := parseObjective(s, expr)
	if err != nil {
		return SLO{}, err
	}
	o.Class = class
	return o, nil
}

// parseObjective reads ParseSLO's expression after any class prefix;
// errors quote the whole input s.
func parseObjective(s, expr string) (SLO, error) {
	lower := strings.ToLower(expr)
	th, err := ParseThreshold(lower)
	if i, op := findOperator(lower); err != nil && i >= 0 && sloMetric.MatchString(canonicalMetric(strings.TrimSpace(lower[:i]))) {
		return SLO{}, fmt.Errorf("SLO %q: %q is not a positive duration", s, strings.TrimSpace(lower[i+len(op):]))
	}
	m := sloMetric.FindStringSubmatch(th.Metric)
	if err != nil || m == nil || (th.Op != "<=" && th.Op != "<") {
		return SLO{}, fmt.Errorf("SLO %q: want METRIC.PERCENTILE<=DURATION with METRIC ttft, ttfo, tpot or e2e, e.g. ttft.p99<=2s", s)
	}
	q, ok := PercentileQ(m[2])
	if !ok {
		return SLO{}, fmt.Errorf("SLO %q: unknown percentile %q (want p50, p90, p95, p99 or p999)", s, m[2])
	}
	if th.Limit <= 0 {
		return SLO{}, fmt.Errorf("SLO %q: %g ms is not a positive duration", s, th.Limit)
	}
	o := SLO{Share: q}
	switch m[1] {
	case "ttft":
		o.TTFTMs = th.Limit
	case "ttfo":
		o.TTFOMs = th.Limit
	case "tpot":
		o.TPOTMs = th.Limit
	default:
		o.E2EMs = th.Limit
	}
	return o, nil
}
