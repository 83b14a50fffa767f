package workload

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseDist(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in               string
		wantString       string
		wantMin, wantMax int
		wantMean         float64
	}{
		// A plain integer is a fixed length.
		{"512", "512", 512, 512, 512},
		// Surrounding spaces are ignored.
		{" 128 ", "128", 128, 128, 128},
		// Zero parses; whether it is allowed is the caller's rule.
		{"0", "0", 0, 0, 0},
		// uniform has inclusive bounds and its mean is the midpoint.
		{"uniform(256,1024)", "uniform(256,1024)", 256, 1024, 640},
		// Spaces inside the call are allowed and canonicalised away.
		{"uniform( 1 , 3 )", "uniform(1,3)", 1, 3, 2},
		// Equal bounds make a degenerate but valid uniform.
		{"uniform(7,7)", "uniform(7,7)", 7, 7, 7},
	}
	for _, tt := range tests {
		d, err := ParseDist(tt.in)
		if err != nil {
			t.Errorf("ParseDist(%q): %v", tt.in, err)
			continue
		}
		if d.String() != tt.wantString || d.Min() != tt.wantMin || d.Max() != tt.wantMax || d.Mean() != tt.wantMean {
			t.Errorf("ParseDist(%q) = %s [%d,%d] mean %v; want %s [%d,%d] mean %v", tt.in,
				d, d.Min(), d.Max(), d.Mean(), tt.wantString, tt.wantMin, tt.wantMax, tt.wantMean)
		}
	}
}

func TestParseDistErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		wantErr string
	}{
		// Empty input is not a length.
		{"", "is not a whole number"},
		// Units or words are not lengths.
		{"512 tokens", "is not a whole number"},
		// Negative lengths are rejected.
		{"-1", "outside 0..10000000"},
		// A typo with extra digits is caught by the upper bound.
		{"5120000000", "outside 0..10000000"},
		// Fractions are not token counts.
		{"1.5", "is not a whole number"},
		// Unknown distributions name what is supported.
		{"gauss(512,64)", `unknown distribution "gauss"`},
		// A missing closing parenthesis is reported.
		{"uniform(1,2", "want name(arguments)"},
		// A stray closing parenthesis is reported.
		{"12)", "unbalanced parenthesis"},
		// Nested calls are not a thing.
		{"uniform((1),2)", "want name(arguments)"},
		// uniform needs exactly two arguments.
		{"uniform(1)", "takes 2 arguments"},
		// uniform needs exactly two arguments, not three.
		{"uniform(1,2,3)", "takes 2 arguments"},
		// Reversed bounds say which is which.
		{"uniform(1024,256)", "low 1024 is above high 256"},
		// A bad bound names itself.
		{"uniform(a,2)", "uniform low"},
		// A bad upper bound names itself.
		{"uniform(1,2x)", "uniform high"},
	}
	for _, tt := range tests {
		_, err := ParseDist(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ParseDist(%q) error = %v; want it to contain %q", tt.in, err, tt.wantErr)
			continue
		}
		if !strings.Contains(err.Error(), "length ") {
			t.Errorf("ParseDist(%q) error %q does not quote the input", tt.in, err)
		}
	}
}

func TestUniformSampleRange(t *testing.T) {
	t.Parallel()
	d, err := ParseDist("uniform(10,14)")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[int]int{}
	const n = 50_000
	sum := 0
	for range n {
		v := d.Sample(rng)
		if v < 10 || v > 14 {
			t.Fatalf("sample %d outside [10,14]", v)
		}
		seen[v]++
		sum += v
	}
	// Both ends are included and each of the 5 values gets about 1/5.
	for v := 10; v <= 14; v++ {
		if got := float64(seen[v]) / n; got < 0.19 || got > 0.21 {
			t.Errorf("value %d drawn %.3f of the time; want about 0.2", v, got)
		}
	}
	if mean := float64(sum) / n; mean < 11.95 || mean > 12.05 {
		t.Errorf("sample mean %.3f; want about %v", mean, d.Mean())
	}
}
