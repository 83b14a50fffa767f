package workload

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/internal/normal"
)

// ksCritical is the Kolmogorov–Smirnov critical value at α = 0.001 for n
// samples: a correct sampler exceeds it once in a thousand seeds, and the
// seed is fixed, so the test is deterministic.
func ksCritical(n int) float64 { return 1.95 / math.Sqrt(float64(n)) }

// ksDistance is the largest gap between the empirical CDF of samples and
// cdf, checked at every integer in [lo, hi] (the distributions are over
// whole tokens, so that is where their CDFs step).
func ksDistance(samples []int, cdf func(x int) float64, lo, hi int) float64 {
	slices.Sort(samples)
	worst, j := 0.0, 0
	for x := lo; x <= hi; x++ {
		for j < len(samples) && samples[j] <= x {
			j++
		}
		worst = max(worst, math.Abs(float64(j)/float64(len(samples))-cdf(x)))
	}
	return worst
}

func draw(d Dist, n int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 99))
	out := make([]int, n)
	for i := range out {
		out[i] = d.Sample(rng)
	}
	return out
}

func stdNormalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// roundedCDF is P(clamp(round(X)) <= x) for a continuous X with CDF f.
func roundedCDF(f func(float64) float64, lo, hi int) func(int) float64 {
	return func(x int) float64 {
		switch {
		case x < lo:
			return 0
		case x >= hi:
			return 1
		}
		return f(float64(x) + 0.5)
	}
}

func TestShapesKS(t *testing.T) {
	t.Parallel()
	const n = 20_000
	lognormCDF := func(mean, sd float64) func(float64) float64 {
		s2 := math.Log1p(sd * sd / (mean * mean))
		mu := math.Log(mean) - s2/2
		return func(x float64) float64 { return stdNormalCDF((math.Log(x) - mu) / math.Sqrt(s2)) }
	}
	tests := []struct {
		spec string
		cdf  func(float64) float64
	}{
		// A bell curve well away from its clamps.
		{"normal(512,64)", func(x float64) float64 { return stdNormalCDF((x - 512) / 64) }},
		// Explicit bounds clamp a wide normal on both sides.
		{"normal(100,80,20,200)", func(x float64) float64 { return stdNormalCDF((x - 100) / 80) }},
		// A right-skewed lognormal with its long tail.
		{"lognormal(512,256)", lognormCDF(512, 256)},
		// A heavy-tailed lognormal (stddev above the mean).
		{"lognormal(300,600)", lognormCDF(300, 600)},
		// Percentiles of a lognormal give back that lognormal: median 458.
		{"empirical(p50=458,p90=843)", func(x float64) float64 {
			sigma := (math.Log(843) - math.Log(458)) / normal.Quantile(0.9)
			return stdNormalCDF((math.Log(x) - math.Log(458)) / sigma)
		}},
	}
	for i, tt := range tests {
		d := mustDist(t, tt.spec)
		samples := draw(d, n, uint64(i))
		cdf := roundedCDF(tt.cdf, d.Min(), d.Max())
		if ks := ksDistance(samples, cdf, d.Min(), d.Max()); ks > ksCritical(n) {
			t.Errorf("%s: KS distance %.4f > %.4f", tt.spec, ks, ksCritical(n))
		}
		sum := 0
		for _, s := range samples {
			if s < d.Min() || s > d.Max() {
				t.Fatalf("%s: sample %d outside [%d,%d]", tt.spec, s, d.Min(), d.Max())
			}
			sum += s
		}
		// The sample mean agrees with Mean() to within 4 standard errors.
		if got := float64(sum) / n; math.Abs(got-d.Mean()) > 0.03*d.Mean() {
			t.Errorf("%s: sample mean %.1f, Mean() %.1f", tt.spec, got, d.Mean())
		}
	}
}

func TestEmpiricalPercentiles(t *testing.T) {
	t.Parallel()
	d := mustDist(t, "empirical(p50=512, p90=1500, p99=4000)")
	const n = 100_000
	s := draw(d, n, 5)
	slices.Sort(s)
	// Each given percentile comes back within 2% (sampling noise and rounding).
	for _, c := range []struct {
		p    float64
		want int
	}{{0.50, 512}, {0.90, 1500}, {0.99, 4000}} {
		got := s[int(c.p*n)]
		if math.Abs(float64(got-c.want)) > 0.02*float64(c.want) {
			t.Errorf("p%v = %d, want about %d", c.p*100, got, c.want)
		}
	}
	if d.Min() < 1 || d.String() != "empirical(p50=512,p90=1500,p99=4000)" {
		t.Errorf("min %d string %s", d.Min(), d)
	}
}

func TestEmpiricalListChiSquare(t *testing.T) {
	t.Parallel()
	d := mustDist(t, "empirical(100,250,250,900)")
	const n = 40_000
	counts := map[int]int{}
	for _, v := range draw(d, n, 3) {
		counts[v]++
	}
	// Listing 250 twice doubles its share; chi-square with 2 degrees of
	// freedom stays under 13.8 (α = 0.001).
	want := map[int]float64{100: 0.25, 250: 0.5, 900: 0.25}
	chi := 0.0
	for v, p := range want {
		e := p * n
		chi += (float64(counts[v]) - e) * (float64(counts[v]) - e) / e
	}
	if chi > 13.8 || len(counts) != 3 {
		t.Errorf("chi-square %.2f over %v", chi, counts)
	}
	if d.Mean() != 375 || d.Min() != 100 || d.Max() != 900 || d.String() != "empirical(100,250,250,900)" {
		t.Errorf("mean %v min %d max %d string %s", d.Mean(), d.Min(), d.Max(), d)
	}
}

func TestShapesParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		min, max int // -1: not checked
	}{
		// Default bounds are the 0.01% / 99.99% quantiles: 512 ± 3.72σ.
		{"normal(512, 64)", "normal(512,64)", 274, 750},
		// A normal that would reach below 1 is clamped at 1.
		{"normal(10,100)", "normal(10,100)", 1, 382},
		// Explicit bounds win and are kept in the canonical form.
		{"normal(100,80,20,200)", "normal(100,80,20,200)", 20, 200},
		// A zero stddev is a fixed length.
		{"normal(64,0)", "normal(64,0)", 64, 64},
		// Lognormal bounds follow its skew.
		{"lognormal(512,256)", "lognormal(512,256)", -1, -1},
		// Percentiles are sorted into canonical order.
		{"empirical(p99=4000,p50=512)", "empirical(p50=512,p99=4000)", -1, -1},
		// Fractional percentiles keep their digits.
		{"empirical(p50=100,p99.9=5000)", "empirical(p50=100,p99.9=5000)", -1, -1},
	}
	for _, tt := range tests {
		d, err := ParseDist(tt.in)
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if d.String() != tt.want || (tt.min >= 0 && (d.Min() != tt.min || d.Max() != tt.max)) {
			t.Errorf("%s = %s [%d,%d], want %s [%d,%d]", tt.in, d, d.Min(), d.Max(), tt.want, tt.min, tt.max)
		}
		// The canonical form parses back to the same distribution.
		again := mustDist(t, d.String())
		if again.String() != d.String() || again.Min() != d.Min() || again.Max() != d.Max() {
			t.Errorf("%s does not round-trip", d)
		}
	}
}

func TestShapesErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"normal(512)", "takes 2 arguments"},                 // missing stddev
		{"normal(512,64,1)", "takes 2 arguments"},            // a lone bound
		{"normal(x,64)", `"x" is not a number`},              // not a number
		{"normal(0,64)", "mean in (0"},                       // zero mean
		{"normal(512,-1)", "stddev in [0"},                   // negative stddev
		{"normal(512,NaN)", "is not a number"},               // NaN
		{"normal(512,64,900,100)", "low bound 900 is above"}, // reversed bounds
		{"normal(512,64,a,100)", "normal low bound"},         // bad bound
		{"lognormal(512)", "takes 2 arguments"},              // missing stddev
		{"lognormal(-5,1)", "mean in (0"},                    // negative mean
		{"lognormal(1e30,1)", "mean in (0"},                  // absurd mean
		{"empirical()", "needs a list"},                      // nothing at all
		{"empirical(10,x)", "empirical value 2"},             // a bad listed value
		{"empirical(p50=10)", "at least two percentiles"},    // one point cannot fit
		{"empirical(p50=10,p90=5)", "must be longer"},        // decreasing
		{"empirical(p50=10,p50=20)", "given twice"},          // duplicate
		{"empirical(p100=10,p50=5)", "p1..p99.9"},            // p100 is the max, unknowable
		{"empirical(q50=10,p90=20)", "p1..p99.9"},            // not a percentile name
		{"empirical(p50=0,p90=20)", "at least 1"},            // zero length
		{"empirical(p50=10,p90=-1)", "outside"},              // negative length
	}
	for _, tt := range tests {
		_, err := ParseDist(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.in, err, tt.want)
		}
	}
}
