package workload

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestBucketsParseAndSample(t *testing.T) {
	t.Parallel()
	d, err := ParseDist("buckets(128:7, 512:2, 2048:1)")
	if err != nil {
		t.Fatal(err)
	}
	// the canonical form parses back to the same distribution
	if d.String() != "buckets(128:7,512:2,2048:1)" || d.Min() != 128 || d.Max() != 2048 {
		t.Errorf("got %s min %d max %d", d, d.Min(), d.Max())
	}
	if want := (128*7 + 512*2 + 2048) / 10.0; math.Abs(d.Mean()-want) > 1e-9 {
		t.Errorf("mean %.2f, want %.2f", d.Mean(), want)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[int]int{}
	const n = 100000
	for range n {
		counts[d.Sample(rng)]++
	}
	// each bucket's share within 1 point of its weight
	for l, share := range map[int]float64{128: 0.7, 512: 0.2, 2048: 0.1} {
		if got := float64(counts[l]) / n; math.Abs(got-share) > 0.01 {
			t.Errorf("length %d: share %.3f, want %.2f", l, got, share)
		}
	}
}

func TestBucketsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ spec, want string }{
		{"buckets()", "length:weight"},        // no pairs at all
		{"buckets(128)", "length:weight"},     // a pair without weight
		{"buckets(128:0)", "positive"},        // zero weight
		{"buckets(128:-1)", "positive"},       // negative weight
		{"buckets(128:x)", "positive"},        // not a number
		{"buckets(abc:1)", "whole number"},    // bad length
		{"buckets(128:NaN)", "positive"},      // NaN weight
		{"buckets(99999999999:1)", "outside"}, // absurd length
	}
	for _, tt := range tests {
		_, err := ParseDist(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tt.spec, err, tt.want)
		}
	}
}
