package record

import (
	"fmt"
	"strings"
)

// maxBoundMs bounds a per-request bound: a day, far beyond any request
// timeout.
const maxBoundMs = 86_400_000

// ParseBounds reads per-request objectives, the bounds goodput judges
// each request by, in the threshold language (ParseThreshold): each
// expression is "METRIC <= LIMIT" (or "<": a bound on a continuous
// latency reads the same) with METRIC ttft, ttfo, tpot or e2e (ttft_ms, ...
// too) and no percentile, since one request has one TTFT, and LIMIT a
// duration or a number of milliseconds: "ttft <= 500ms", "tpot_ms <= 50".
// An expression may hold several bounds separated by commas. A metric
// bounded twice is an error, so a typo cannot silently win. The zero
// SLO (no expression) bounds nothing.
func ParseBounds(exprs []string) (SLO, error) {
	var s SLO
	seen := map[string]string{}
	for _, e := range exprs {
		for part := range strings.SplitSeq(e, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			name, ms, err := parseBound(part)
			if err != nil {
				return SLO{}, err
			}
			if first, dup := seen[name]; dup {
				return SLO{}, fmt.Errorf("SLO %q: %s is already bounded by %q", part, name, first)
			}
			seen[name] = part
			switch name {
			case "ttft":
				s.TTFTMs = ms
			case "ttfo":
				s.TTFOMs = ms
			case "tpot":
				s.TPOTMs = ms
			default:
				s.E2EMs = ms
			}
		}
	}
	return s, nil
}

// parseBound reads one "METRIC <= LIMIT" into the metric's short name and
// the limit in milliseconds.
func parseBound(expr string) (name string, ms float64, err error) {
	lower := strings.ToLower(expr)
	i, op := findOperator(lower)
	if i < 0 || (op != "<=" && op != "<") {
		return "", 0, fmt.Errorf("SLO %q: want METRIC <= LIMIT with METRIC ttft, ttfo, tpot or e2e, e.g. ttft <= 500ms", expr)
	}
	metric := strings.TrimSpace(lower[:i])
	base, stat, hasStat := strings.Cut(metric, ".")
	name = strings.TrimSuffix(base, "_ms")
	if name != "ttft" && name != "ttfo" && name != "tpot" && name != "e2e" {
		return "", 0, fmt.Errorf("SLO %q: %q is not ttft, ttfo, tpot or e2e", expr, metric)
	}
	if hasStat {
		return "", 0, fmt.Errorf("SLO %q: a per-request bound has no percentile (each request has one %s); write %s <= LIMIT here, and %s.%s in a threshold or a capacity objective",
			expr, name, name, name, stat)
	}
	ms, err = parseLimit(strings.TrimSpace(lower[i+len(op):]), name+"_ms")
	if err != nil {
		return "", 0, fmt.Errorf("SLO %q: %v", expr, err)
	}
	if ms <= 0 || ms > maxBoundMs {
		return "", 0, fmt.Errorf("SLO %q: %g ms is not a bound from 0 to a day", expr, ms)
	}
	return name, ms, nil
}
