package workload

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// MaxLength is the largest token count a length distribution may produce.
// It is far beyond any model's context window today; its job is to turn a
// typo such as "5120000000" into an error instead of gigabytes of prompt.
const MaxLength = 10_000_000

// Dist is a distribution of token counts (prompt or output lengths).
// Implementations are immutable and safe for concurrent use; all randomness
// comes from the rng passed to Sample, so a seeded rng gives a repeatable
// sequence.
type Dist interface {
	// Sample draws one length in [Min(), Max()].
	Sample(rng *rand.Rand) int
	// Mean is the expected value of Sample.
	Mean() float64
	// Min is the smallest length Sample can return.
	Min() int
	// Max is the largest length Sample can return.
	Max() int
	// String is the spec the distribution was parsed from, in canonical
	// form: ParseDist(d.String()) describes the same distribution.
	String() string
}

// distParsers maps a distribution name to the function that builds it from
// its arguments. Other kinds register themselves from the file that
// defines them (buckets.go, shapes.go).
var distParsers = map[string]func(args []string) (Dist, error){
	"uniform": parseUniform,
}

// ParseDist parses a length distribution: a plain integer such as "512"
// (every request gets exactly that), "uniform(256,1024)" (integers drawn
// uniformly, both ends included), "normal(512,128)", "lognormal(512,256)"
// (mean and stddev of the lengths; optional low,high bounds follow),
// "empirical(100,250,250,900)" (one of the listed lengths),
// "empirical(p50=512,p90=1500,p99=4000)" (fitted through percentiles) or
// "buckets(128:7,512:2)" (lengths with weights). The same syntax serves the
// command line and the plan file.
func ParseDist(s string) (Dist, error) {
	s = strings.TrimSpace(s)
	name, args, isCall, err := splitCall(s)
	if err != nil {
		return nil, fmt.Errorf("length %q: %w", s, err)
	}
	if !isCall {
		n, err := parseLength(s)
		if err != nil {
			return nil, fmt.Errorf("length %q: %w", s, err)
		}
		return Fixed(n), nil
	}
	parse, ok := distParsers[name]
	if !ok {
		return nil, fmt.Errorf("length %q: unknown distribution %q (want an integer such as 512, uniform(lo,hi), normal(mean,sd), lognormal(mean,sd), empirical(...) or buckets(len:weight,...))", s, name)
	}
	d, err := parse(args)
	if err != nil {
		return nil, fmt.Errorf("length %q: %w", s, err)
	}
	return d, nil
}

// splitCall splits "name(a, b)" into its name and trimmed arguments.
// isCall is false when s has no parenthesis at all (a plain value).
func splitCall(s string) (name string, args []string, isCall bool, err error) {
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if strings.ContainsRune(s, ')') {
			return "", nil, false, fmt.Errorf("unbalanced parenthesis")
		}
		return "", nil, false, nil
	}
	if !strings.HasSuffix(s, ")") || strings.Count(s, "(") != 1 || strings.Count(s, ")") != 1 {
		return "", nil, true, fmt.Errorf("want name(arguments), e.g. uniform(256,1024)")
	}
	name = strings.TrimSpace(s[:open])
	for _, a := range strings.Split(s[open+1:len(s)-1], ",") {
		args = append(args, strings.TrimSpace(a))
	}
	return name, args, true, nil
}

// parseLength parses a non-negative token count no larger than MaxLength.
func parseLength(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number of tokens", s)
	}
	if n < 0 || n > MaxLength {
		return 0, fmt.Errorf("%d tokens is outside 0..%d", n, MaxLength)
	}
	return n, nil
}

// Fixed is a distribution that always gives the same length.
type Fixed int

// Sample returns the fixed length; it draws nothing from rng.
func (f Fixed) Sample(*rand.Rand) int { return int(f) }

// Mean returns the fixed length.
func (f Fixed) Mean() float64 { return float64(f) }

// Min returns the fixed length.
func (f Fixed) Min() int { return int(f) }

// Max returns the fixed length.
func (f Fixed) Max() int { return int(f) }

// String returns the length as a plain integer.
func (f Fixed) String() string { return strconv.Itoa(int(f)) }

// uniform draws integers uniformly from [lo, hi], both ends included.
// It is unexported so that lo <= hi (which Sample relies on) always holds.
type uniform struct {
	lo, hi int
}

// parseUniform builds a uniform from "lo", "hi".
func parseUniform(args []string) (Dist, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("uniform takes 2 arguments (lo,hi), got %d", len(args))
	}
	lo, err := parseLength(args[0])
	if err != nil {
		return nil, fmt.Errorf("uniform low: %w", err)
	}
	hi, err := parseLength(args[1])
	if err != nil {
		return nil, fmt.Errorf("uniform high: %w", err)
	}
	if lo > hi {
		return nil, fmt.Errorf("uniform low %d is above high %d", lo, hi)
	}
	return uniform{lo: lo, hi: hi}, nil
}

func (u uniform) Sample(rng *rand.Rand) int { return u.lo + rng.IntN(u.hi-u.lo+1) }
func (u uniform) Mean() float64             { return float64(u.lo+u.hi) / 2 }
func (u uniform) Min() int                  { return u.lo }
func (u uniform) Max() int                  { return u.hi }
func (u uniform) String() string            { return fmt.Sprintf("uniform(%d,%d)", u.lo, u.hi) }
