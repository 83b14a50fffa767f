package workload

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/inferload/inferload/internal/normal"
)

func init() {
	distParsers["normal"] = parseNormal
	distParsers["lognormal"] = parseLognormal
	distParsers["empirical"] = parseEmpirical
}

// tailP is how far into each tail a continuous distribution's default
// bounds reach: lengths beyond its 0.01% and 99.99% quantiles are clamped.
// Real traffic has no 40-sigma prompts, and a bound keeps Max() honest for
// the checks (context length, output >= 1) that rely on it.
const tailP = 1e-4

// quantileDist draws lengths by inverse transform: a uniform p in [0, 1)
// goes through the quantile function q, is rounded to a whole token count
// and clamped to [lo, hi]. One rng draw per sample keeps workloads
// reproducible whatever the shape. Normal, lognormal and percentile-fitted
// empirical distributions are all this type with a different q.
type quantileDist struct {
	spec   string // canonical form, from String
	q      func(p float64) float64
	lo, hi int
	mean   float64
}

// newQuantileDist clamps q's tails to [lo, hi] (defaulting each bound that
// is negative to q's tailP quantile, and at least 1) and computes the mean.
func newQuantileDist(spec string, q func(float64) float64, lo, hi int) (Dist, error) {
	if lo < 0 {
		lo = max(1, roundLength(q(tailP)))
	}
	if hi < 0 {
		hi = max(lo, roundLength(q(1-tailP)))
	}
	if lo > hi {
		return nil, fmt.Errorf("low bound %d is above high bound %d", lo, hi)
	}
	d := &quantileDist{spec: spec, q: q, lo: lo, hi: hi}
	d.mean = d.numericMean()
	return d, nil
}

// roundLength rounds a real length to a token count inside 0..MaxLength.
func roundLength(x float64) int {
	if math.IsNaN(x) {
		return 0
	}
	return int(math.Round(min(max(x, 0), MaxLength)))
}

// meanSteps is how many quantiles the mean averages over: the mid-points
// of 20 000 equal slices of probability give it to about 0.1% for the
// shapes here, computed once at parse time.
const meanSteps = 20_000

// numericMean is the mean of the clamped, rounded distribution, by the
// midpoint rule over p; clamping and rounding make a closed form more
// trouble than it is worth.
func (d *quantileDist) numericMean() float64 {
	sum := 0.0
	for k := range meanSteps {
		sum += float64(d.at((float64(k) + 0.5) / meanSteps))
	}
	return sum / meanSteps
}

// at is the length at probability p: q(p) rounded and clamped.
func (d *quantileDist) at(p float64) int {
	return min(max(roundLength(d.q(p)), d.lo), d.hi)
}

func (d *quantileDist) Sample(rng *rand.Rand) int { return d.at(rng.Float64()) }
func (d *quantileDist) Mean() float64             { return d.mean }
func (d *quantileDist) Min() int                  { return d.lo }
func (d *quantileDist) Max() int                  { return d.hi }
func (d *quantileDist) String() string            { return d.spec }

// parseFloats parses every argument as a finite number.
func parseFloats(what string, args []string) ([]float64, error) {
	out := make([]float64, len(args))
	for i, a := range args {
		x, err := strconv.ParseFloat(a, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%s argument %d: %q is not a number", what, i+1, a)
		}
		out[i] = x
	}
	return out, nil
}

// bounds reads the optional lo,hi arguments that follow a shape's
// parameters; -1 means "the default tail bound".
func bounds(what string, args []string) (lo, hi int, err error) {
	lo, hi = -1, -1
	switch len(args) {
	case 0:
		return lo, hi, nil
	case 2:
		if lo, err = parseLength(args[0]); err != nil {
			return 0, 0, fmt.Errorf("%s low bound: %w", what, err)
		}
		if hi, err = parseLength(args[1]); err != nil {
			return 0, 0, fmt.Errorf("%s high bound: %w", what, err)
		}
		return lo, hi, nil
	}
	return 0, 0, fmt.Errorf("%s takes 2 arguments, or 4 with low and high bounds", what)
}

// canonical formats a call with numbers in their shortest form.
func canonical(name string, nums []float64, lo, hi int) string {
	parts := make([]string, 0, len(nums)+2)
	for _, x := range nums {
		parts = append(parts, strconv.FormatFloat(x, 'g', -1, 64))
	}
	if lo >= 0 {
		parts = append(parts, strconv.Itoa(lo), strconv.Itoa(hi))
	}
	return name + "(" + strings.Join(parts, ",") + ")"
}

// parseNormal builds normal(mean,stddev[,lo,hi]): a bell curve around mean,
// rounded to whole tokens and clamped to [lo, hi] (by default its 0.01%
// and 99.99% quantiles, and never below 1).
func parseNormal(args []string) (Dist, error) {
	if len(args) != 2 && len(args) != 4 {
		return nil, fmt.Errorf("normal takes 2 arguments (mean,stddev), or 4 with low and high bounds")
	}
	p, err := parseFloats("normal", args[:2])
	if err != nil {
		return nil, err
	}
	mean, sd := p[0], p[1]
	if mean <= 0 || mean > MaxLength || sd < 0 || sd > MaxLength {
		return nil, fmt.Errorf("normal needs a mean in (0, %d] and a stddev in [0, %d]", MaxLength, MaxLength)
	}
	lo, hi, err := bounds("normal", args[2:])
	if err != nil {
		return nil, err
	}
	q := func(p float64) float64 { return mean + sd*normal.Quantile(p) }
	return newQuantileDist(canonical("normal", p, lo, hi), q, lo, hi)
}

// parseLognormal builds lognormal(mean,stddev[,lo,hi]), where mean and
// stddev are those of the lengths themselves (not of their logarithm): the
// right-skewed shape of real prompt and answer lengths, with a long tail
// of long requests. From them, σ² = ln(1 + stddev²/mean²) and
// μ = ln(mean) − σ²/2; e.g. lognormal(512,256) has its median at 458.
func parseLognormal(args []string) (Dist, error) {
	if len(args) != 2 && len(args) != 4 {
		return nil, fmt.Errorf("lognormal takes 2 arguments (mean,stddev), or 4 with low and high bounds")
	}
	p, err := parseFloats("lognormal", args[:2])
	if err != nil {
		return nil, err
	}
	mean, sd := p[0], p[1]
	if mean <= 0 || mean > MaxLength || sd < 0 || sd > MaxLength {
		return nil, fmt.Errorf("lognormal needs a mean in (0, %d] and a stddev in [0, %d]", MaxLength, MaxLength)
	}
	lo, hi, err := bounds("lognormal", args[2:])
	if err != nil {
		return nil, err
	}
	sigma := math.Sqrt(math.Log1p(sd * sd / (mean * mean)))
	mu := normal.LognormalMu(mean, sigma)
	q := func(p float64) float64 { return math.Exp(mu + sigma*normal.Quantile(p)) }
	return newQuantileDist(canonical("lognormal", p, lo, hi), q, lo, hi)
}

// parseEmpirical builds one of two empirical distributions:
//
//   - empirical(120,480,480,2000,...): draws one of the listed lengths, each
//     listed value equally likely (list a length twice to double it), e.g.
//     the prompt lengths of a sample of production requests;
//   - empirical(p50=512,p90=1500,p99=4000): a smooth distribution through
//     the given percentiles (any of p1..p99.9, at least two).
func parseEmpirical(args []string) (Dist, error) {
	if len(args) == 0 || (len(args) == 1 && args[0] == "") {
		return nil, fmt.Errorf("empirical needs a list of lengths or percentiles, e.g. empirical(p50=512,p90=1500,p99=4000)")
	}
	if strings.Contains(args[0], "=") {
		return parsePercentiles(args)
	}
	values := make([]int, len(args))
	for i, a := range args {
		n, err := parseLength(a)
		if err != nil {
			return nil, fmt.Errorf("empirical value %d: %w", i+1, err)
		}
		values[i] = n
	}
	return newSampleDist(values), nil
}

// sampleDist draws uniformly from a list of observed lengths.
type sampleDist struct {
	values []int // as given: String keeps the user's order
	mean   float64
	lo, hi int
}

func newSampleDist(values []int) *sampleDist {
	d := &sampleDist{values: values, lo: slices.Min(values), hi: slices.Max(values)}
	for _, v := range values {
		d.mean += float64(v)
	}
	d.mean /= float64(len(values))
	return d
}

func (d *sampleDist) Sample(rng *rand.Rand) int { return d.values[rng.IntN(len(d.values))] }
func (d *sampleDist) Mean() float64             { return d.mean }
func (d *sampleDist) Min() int                  { return d.lo }
func (d *sampleDist) Max() int                  { return d.hi }
func (d *sampleDist) String() string {
	parts := make([]string, len(d.values))
	for i, v := range d.values {
		parts[i] = strconv.Itoa(v)
	}
	return "empirical(" + strings.Join(parts, ",") + ")"
}

// knot is one given percentile: probability p has length at least 1.
type knot struct {
	pct, p, z, logLen float64
}

// parsePercentiles fits a distribution through "pNN=length" pairs. Between
// two given percentiles the log of the length is linear in the normal
// z-score of p, so a lognormal's percentiles are reproduced exactly and any
// other set is matched point for point; beyond the outermost ones the
// nearest segment's slope continues into the tails (clamped as for
// lognormal).
func parsePercentiles(args []string) (Dist, error) {
	knots := make([]knot, 0, len(args))
	for _, a := range args {
		k, err := parseKnot(a)
		if err != nil {
			return nil, err
		}
		knots = append(knots, k)
	}
	if len(knots) < 2 {
		return nil, fmt.Errorf("empirical needs at least two percentiles, e.g. p50=512,p99=4000")
	}
	slices.SortFunc(knots, func(a, b knot) int { return cmp.Compare(a.p, b.p) })
	for i := 1; i < len(knots); i++ {
		if knots[i].p == knots[i-1].p {
			return nil, fmt.Errorf("percentile p%s is given twice", formatP(knots[i].pct))
		}
		if knots[i].logLen <= knots[i-1].logLen {
			return nil, fmt.Errorf("p%s must be longer than p%s: percentiles grow with p",
				formatP(knots[i].pct), formatP(knots[i-1].pct))
		}
	}
	spec := make([]string, len(knots))
	for i, k := range knots {
		spec[i] = fmt.Sprintf("p%s=%d", formatP(k.pct), roundLength(math.Exp(k.logLen)))
	}
	q := func(p float64) float64 { return math.Exp(interpolate(knots, normal.Quantile(p))) }
	return newQuantileDist("empirical("+strings.Join(spec, ",")+")", q, -1, -1)
}

// parseKnot parses "p90=1500".
func parseKnot(a string) (knot, error) {
	name, val, _ := strings.Cut(a, "=")
	name, val = strings.TrimSpace(name), strings.TrimSpace(val)
	pct, err := strconv.ParseFloat(strings.TrimPrefix(strings.ToLower(name), "p"), 64)
	if !strings.HasPrefix(strings.ToLower(name), "p") || err != nil || !(pct > 0 && pct < 100) {
		return knot{}, fmt.Errorf("empirical %q: want a percentile p1..p99.9 such as p90=1500", a)
	}
	n, err := parseLength(val)
	if err != nil {
		return knot{}, fmt.Errorf("empirical %q: %w", a, err)
	}
	if n < 1 {
		return knot{}, fmt.Errorf("empirical %q: a percentile length must be at least 1", a)
	}
	p := pct / 100
	return knot{pct: pct, p: p, z: normal.Quantile(p), logLen: math.Log(float64(n))}, nil
}

// interpolate is the piecewise-linear function through the knots (z,
// logLen), extended past the ends with the end segments' slopes.
func interpolate(knots []knot, z float64) float64 {
	i := 1
	for i < len(knots)-1 && z > knots[i].z {
		i++
	}
	a, b := knots[i-1], knots[i]
	return a.logLen + (z-a.z)*(b.logLen-a.logLen)/(b.z-a.z)
}

func formatP(pct float64) string { return strconv.FormatFloat(pct, 'g', -1, 64) }
