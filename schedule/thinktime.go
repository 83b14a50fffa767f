package schedule

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// thinkKind says how a ThinkTime draws its pauses.
type thinkKind uint8

const (
	thinkNone thinkKind = iota
	thinkConstant
	thinkUniform
	thinkExponential
)

// ThinkTime is a closed-loop user's pause between receiving a response and
// sending its next request. The zero value is no pause.
type ThinkTime struct {
	kind thinkKind
	a, b time.Duration // constant: a; uniform: [a, b]; exponential: mean a
}

// ParseThinkTime parses a think time: "" (none), a Go duration such as
// "500ms" (always that long), "uniform(1s,5s)" (uniform between the two,
// both included) or "exponential(2s)" (exponential with that mean, the
// pauses of independent users).
func ParseThinkTime(s string) (ThinkTime, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return ThinkTime{}, nil
	}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		d, err := parseDuration(s)
		if err != nil {
			return ThinkTime{}, fmt.Errorf("think time %q: %w", s, err)
		}
		return ThinkTime{kind: thinkConstant, a: d}, nil
	}
	t, err := parseThinkCall(strings.TrimSpace(s[:open]), s[open:])
	if err != nil {
		return ThinkTime{}, fmt.Errorf("think time %q: %w", s, err)
	}
	return t, nil
}

// parseThinkCall parses the "uniform" or "exponential" form; rest is the
// parenthesised argument list.
func parseThinkCall(name, rest string) (ThinkTime, error) {
	if !strings.HasSuffix(rest, ")") || strings.Count(rest, "(") != 1 || strings.Count(rest, ")") != 1 {
		return ThinkTime{}, fmt.Errorf("want a duration, uniform(lo,hi) or exponential(mean)")
	}
	args := strings.Split(rest[1:len(rest)-1], ",")
	switch name {
	case "uniform":
		return parseUniformThink(args)
	case "exponential":
		if len(args) != 1 {
			return ThinkTime{}, fmt.Errorf("exponential takes 1 argument (mean), got %d", len(args))
		}
		mean, err := parseDuration(args[0])
		if err != nil {
			return ThinkTime{}, fmt.Errorf("exponential mean: %w", err)
		}
		return ThinkTime{kind: thinkExponential, a: mean}, nil
	}
	return ThinkTime{}, fmt.Errorf("unknown distribution %q (want a duration, uniform(lo,hi) or exponential(mean))", name)
}

// parseUniformThink parses the arguments of "uniform(lo,hi)".
func parseUniformThink(args []string) (ThinkTime, error) {
	if len(args) != 2 {
		return ThinkTime{}, fmt.Errorf("uniform takes 2 arguments (lo,hi), got %d", len(args))
	}
	lo, err := parseDuration(args[0])
	if err != nil {
		return ThinkTime{}, fmt.Errorf("uniform low: %w", err)
	}
	hi, err := parseDuration(args[1])
	if err != nil {
		return ThinkTime{}, fmt.Errorf("uniform high: %w", err)
	}
	if lo > hi {
		return ThinkTime{}, fmt.Errorf("uniform low %v is above high %v", lo, hi)
	}
	return ThinkTime{kind: thinkUniform, a: lo, b: hi}, nil
}

// parseDuration parses a non-negative Go duration with a friendly error.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 500ms, 2s)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%v is negative", d)
	}
	return d, nil
}

// Sample draws one pause. Only uniform and exponential think times use rng.
func (t ThinkTime) Sample(rng *rand.Rand) time.Duration {
	switch t.kind {
	case thinkConstant:
		return t.a
	case thinkUniform:
		// uint64 keeps b-a+1 from overflowing when the span is the
		// largest Duration.
		return t.a + time.Duration(rng.Uint64N(uint64(t.b-t.a)+1))
	case thinkExponential:
		return seconds(rng.ExpFloat64() * t.a.Seconds())
	}
	return 0
}

// Mean is the expected pause.
func (t ThinkTime) Mean() time.Duration {
	switch t.kind {
	case thinkConstant, thinkExponential:
		return t.a
	case thinkUniform:
		return t.a + (t.b-t.a)/2
	}
	return 0
}

// IsZero reports whether there is no pause at all.
func (t ThinkTime) IsZero() bool { return t.Mean() == 0 }

// String is the canonical spec: ParseThinkTime(t.String()) gives t back.
func (t ThinkTime) String() string {
	switch t.kind {
	case thinkConstant:
		return t.a.String()
	case thinkUniform:
		return fmt.Sprintf("uniform(%v,%v)", t.a, t.b)
	case thinkExponential:
		return fmt.Sprintf("exponential(%v)", t.a)
	}
	return ""
}
