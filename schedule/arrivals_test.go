package schedule

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/internal/golden"
)

func mustArrivals(t testing.TB, kind string, rate, burstiness float64, seed uint64) *Arrivals {
	t.Helper()
	a, err := NewArrivals(kind, rate, burstiness, seed)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestConstantArrivals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rate float64
		nth  int // 1-based
		want time.Duration
	}{
		// 2/s constant: the 1st request is due at once.
		{2, 1, 0},
		// 2/s constant: the 3rd arrival => 1s.
		{2, 3, time.Second},
		// 1000/s: the 1001st arrival is due at exactly 1s.
		{1000, 1001, time.Second},
		// 3/s: offsets are i/3 computed directly, so the 3,000,001st is at
		// exactly 1,000,000s with no accumulated rounding.
		{3, 3_000_001, 1_000_000 * time.Second},
		// 0.5/s (one every 2s): the 2nd arrival => 2s.
		{0.5, 2, 2 * time.Second},
	}
	for _, tt := range tests {
		a := mustArrivals(t, Constant, tt.rate, 0, 1)
		var got time.Duration
		for range tt.nth {
			got = a.Next()
		}
		if got != tt.want {
			t.Errorf("rate %v, arrival %d: got %v, want %v", tt.rate, tt.nth, got, tt.want)
		}
	}
}

func TestRandomArrivalStatistics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind       string
		rate       float64
		burstiness float64
		wantCV2    float64
	}{
		// Poisson: exponential gaps, mean 1/rate, CV² 1.
		{Poisson, 8, 0, 1},
		// Gamma with burstiness 1 is Poisson.
		{Gamma, 8, 1, 1},
		// Burstiness 0.25: same mean, CV² 4 (clumps and lulls; uses the
		// shape < 1 boost).
		{Gamma, 100, 0.25, 4},
		// Burstiness 4: smoother than Poisson, CV² 0.25.
		{Gamma, 1000, 4, 0.25},
	}
	const n = 100_000
	for _, tt := range tests {
		a := mustArrivals(t, tt.kind, tt.rate, tt.burstiness, 7)
		gaps := make([]float64, n)
		prev := a.Next()
		for i := range gaps {
			next := a.Next()
			if next < prev {
				t.Fatalf("%s: offset went back from %v to %v", tt.kind, prev, next)
			}
			gaps[i] = (next - prev).Seconds()
			prev = next
		}
		mean, cv2 := meanCV2(gaps)
		if want := 1 / tt.rate; math.Abs(mean-want)/want > 0.03 {
			t.Errorf("%s rate %v burstiness %v: mean gap %.6fs, want %.6fs ±3%%", tt.kind, tt.rate, tt.burstiness, mean, want)
		}
		if math.Abs(cv2-tt.wantCV2)/tt.wantCV2 > 0.10 {
			t.Errorf("%s rate %v burstiness %v: gap CV² %.3f, want %.3f ±10%%", tt.kind, tt.rate, tt.burstiness, cv2, tt.wantCV2)
		}
	}
}

// meanCV2 returns the mean and the squared coefficient of variation.
func meanCV2(xs []float64) (mean, cv2 float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, ss / float64(len(xs)-1) / (mean * mean)
}

func TestArrivalsDeterministic(t *testing.T) {
	t.Parallel()
	for _, kind := range ArrivalKinds() {
		a, b := mustArrivals(t, kind, 50, 0.5, 3), mustArrivals(t, kind, 50, 0.5, 3)
		other := mustArrivals(t, kind, 50, 0.5, 4)
		same := true
		for i := range 1000 {
			x, y, z := a.Next(), b.Next(), other.Next()
			if x != y {
				t.Fatalf("%s: same seed differs at arrival %d: %v vs %v", kind, i, x, y)
			}
			same = same && x == z
		}
		// Only the constant schedule ignores the seed.
		if same != (kind == Constant) {
			t.Errorf("%s: seeds 3 and 4 gave identical schedules = %v", kind, same)
		}
	}
}

func TestNewArrivalsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind       string
		rate, burs float64
		wantErr    string
	}{
		// A zero rate would never send anything.
		{Poisson, 0, 1, "above 0"},
		// A negative rate is meaningless.
		{Constant, -1, 1, "above 0"},
		// NaN fails every comparison, so it is rejected explicitly.
		{Poisson, math.NaN(), 1, "above 0"},
		// An infinite rate would put every request at 0.
		{Constant, math.Inf(1), 1, "finite"},
		// Gamma needs a positive shape.
		{Gamma, 1, 0, "burstiness 0"},
		// Gamma rejects an infinite shape.
		{Gamma, 1, math.Inf(1), "burstiness +Inf"},
		// Unknown kinds list the known ones.
		{"uniform", 1, 1, "want one of constant, poisson, gamma"},
	}
	for _, tt := range tests {
		_, err := NewArrivals(tt.kind, tt.rate, tt.burs, 1)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("NewArrivals(%q, %v, %v) error = %v; want %q", tt.kind, tt.rate, tt.burs, err, tt.wantErr)
		}
	}
	// Burstiness is not checked for kinds that do not use it.
	if _, err := NewArrivals(Poisson, 1, 0, 1); err != nil {
		t.Errorf("poisson with burstiness 0: %v", err)
	}
}

func TestArrivalsSaturate(t *testing.T) {
	t.Parallel()
	// A vanishing rate puts the second arrival beyond what a Duration can
	// hold; it saturates instead of wrapping to a negative offset.
	a := mustArrivals(t, Constant, 1e-300, 0, 1)
	if first, second := a.Next(), a.Next(); first != 0 || second != time.Duration(math.MaxInt64) {
		t.Errorf("got %v, %v; want 0, max Duration", first, second)
	}
}

// TestArrivalsGolden pins the schedules for a seed so that a change to the
// generator (which would silently change every user's schedule) shows up
// in review. Refresh with -update.
func TestArrivalsGolden(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for _, kind := range ArrivalKinds() {
		a := mustArrivals(t, kind, 10, 0.5, 1)
		fmt.Fprintf(&b, "%s rate=10 burstiness=0.5 seed=1:", kind)
		for range 8 {
			fmt.Fprintf(&b, " %v", a.Next())
		}
		b.WriteByte('\n')
	}
	golden.Check(t, filepath.Join("testdata", "arrivals.golden"), []byte(b.String()))
}

func BenchmarkArrivalsNext(b *testing.B) {
	for _, kind := range ArrivalKinds() {
		b.Run(kind, func(b *testing.B) {
			a := mustArrivals(b, kind, 1000, 0.5, 1)
			b.ReportAllocs()
			for b.Loop() {
				_ = a.Next()
			}
		})
	}
}

func ExampleArrivals() {
	a, err := NewArrivals(Constant, 4, 0, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		fmt.Println(a.Next())
	}
	// Output:
	// 0s
	// 250ms
	// 500ms
}
