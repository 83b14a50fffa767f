package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestParseThinkTime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in         string
		wantString string
		wantMean   time.Duration
	}{
		// Empty means no think time at all.
		{"", "", 0},
		// A plain duration is a constant pause.
		{"500ms", "500ms", 500 * time.Millisecond},
		// Zero is a valid constant pause.
		{"0s", "0s", 0},
		// uniform's mean is its midpoint; spaces are tolerated.
		{"uniform(1s, 5s)", "uniform(1s,5s)", 3 * time.Second},
		// exponential is parameterised by its mean.
		{"exponential(2s)", "exponential(2s)", 2 * time.Second},
		// Any Go duration syntax works inside calls.
		{" exponential( 1m30s ) ", "exponential(1m30s)", 90 * time.Second},
	}
	for _, tt := range tests {
		got, err := ParseThinkTime(tt.in)
		if err != nil {
			t.Errorf("ParseThinkTime(%q): %v", tt.in, err)
			continue
		}
		if got.String() != tt.wantString || got.Mean() != tt.wantMean || got.IsZero() != (tt.wantMean == 0) {
			t.Errorf("ParseThinkTime(%q) = %q mean %v; want %q mean %v", tt.in, got, got.Mean(), tt.wantString, tt.wantMean)
		}
		if back, err := ParseThinkTime(got.String()); err != nil || back != got {
			t.Errorf("ParseThinkTime(%q).String() does not parse back: %v", tt.in, err)
		}
	}
}

func TestParseThinkTimeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		wantErr string
	}{
		// A bare number has no unit.
		{"500", `"500" is not a duration`},
		// Negative pauses make no sense.
		{"-1s", "is negative"},
		// Unknown distributions list the supported forms.
		{"normal(1s,2s)", `unknown distribution "normal"`},
		// A missing parenthesis is reported.
		{"uniform(1s,2s", "want a duration, uniform(lo,hi) or exponential(mean)"},
		// uniform takes two bounds.
		{"uniform(1s)", "uniform takes 2 arguments"},
		// Reversed bounds say which is which.
		{"uniform(5s,1s)", "low 5s is above high 1s"},
		// A bad bound names itself.
		{"uniform(x,1s)", "uniform low"},
		// A bad upper bound names itself.
		{"uniform(1s,1)", "uniform high"},
		// exponential takes exactly one mean.
		{"exponential(1s,2s)", "exponential takes 1 argument"},
		// A bad mean names itself.
		{"exponential(soon)", "exponential mean"},
	}
	for _, tt := range tests {
		_, err := ParseThinkTime(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ParseThinkTime(%q) error = %v; want %q", tt.in, err, tt.wantErr)
			continue
		}
		if !strings.HasPrefix(err.Error(), "think time ") {
			t.Errorf("ParseThinkTime(%q) error %q does not say what was parsed", tt.in, err)
		}
	}
}

func TestThinkTimeSample(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec     string
		min, max time.Duration
	}{
		// No think time never pauses.
		{"", 0, 0},
		// A constant pause is always the same.
		{"250ms", 250 * time.Millisecond, 250 * time.Millisecond},
		// uniform stays inside its bounds, both included.
		{"uniform(1s,3s)", time.Second, 3 * time.Second},
		// The widest possible uniform does not overflow.
		{"uniform(0s,2562047h47m16.854775807s)", 0, math.MaxInt64},
		// exponential is never negative (and has no upper bound).
		{"exponential(2s)", 0, math.MaxInt64},
	}
	const n = 100_000
	for _, tt := range tests {
		think, err := ParseThinkTime(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(11, 12))
		var sum float64
		for range n {
			d := think.Sample(rng)
			if d < tt.min || d > tt.max {
				t.Fatalf("%q: sample %v outside [%v, %v]", tt.spec, d, tt.min, tt.max)
			}
			sum += d.Seconds()
		}
		// The sample mean is within 2% of Mean().
		if want := think.Mean().Seconds(); math.Abs(sum/n-want) > 0.02*want {
			t.Errorf("%q: sample mean %.4fs, want %.4fs ±2%%", tt.spec, sum/n, want)
		}
	}
}

func ExampleParseThinkTime() {
	think, err := ParseThinkTime("uniform(1s,5s)")
	if err != nil {
		fmt.Println(err)
		return
	}
	rng := rand.New(rand.NewPCG(1, 2))
	fmt.Println(think, "mean", think.Mean())
	d := think.Sample(rng)
	fmt.Println(d >= time.Second && d <= 5*time.Second)
	// Output:
	// uniform(1s,5s) mean 3s
	// true
}
