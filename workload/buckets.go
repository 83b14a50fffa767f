package workload

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

func init() { distParsers["buckets"] = parseBuckets }

// buckets draws one of a few lengths with given weights, e.g.
// "buckets(128:7,512:2,2048:1)": 70% of requests get 128 tokens, 20% 512
// and 10% 2048 — the short-chat-plus-long-document mix that makes short
// requests queue behind long ones.
type buckets struct {
	lengths []int
	cum     []float64 // cumulative weights, last = total
}

// parseBuckets builds a buckets distribution from "length:weight" pairs.
func parseBuckets(args []string) (Dist, error) {
	if len(args) == 0 || (len(args) == 1 && args[0] == "") {
		return nil, fmt.Errorf("buckets needs length:weight pairs, e.g. buckets(128:7,512:2,2048:1)")
	}
	var lengths []int
	var weights []float64
	for _, a := range args {
		l, w, ok := strings.Cut(a, ":")
		if !ok {
			return nil, fmt.Errorf("bucket %q: want length:weight, e.g. 512:2", a)
		}
		n, err := parseLength(strings.TrimSpace(l))
		if err != nil {
			return nil, fmt.Errorf("bucket %q: %w", a, err)
		}
		weight, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
		if err != nil || !validWeight(weight) {
			return nil, fmt.Errorf("bucket %q: weight must be a positive number", a)
		}
		lengths, weights = append(lengths, n), append(weights, weight)
	}
	return Buckets(lengths, weights)
}

// validWeight is a bucket's weight rule: positive, and at most 1e12 so
// that the cumulative weights stay exact enough to draw by.
func validWeight(w float64) bool { return w > 0 && w <= 1e12 }

// Buckets is the weighted choice of lengths, "buckets(...)" built from
// code: lengths[i] is drawn with weight weights[i]. Each length is in
// 0..MaxLength, each weight positive; one draw takes one Float64 from
// the rng.
func Buckets(lengths []int, weights []float64) (Dist, error) {
	if len(lengths) == 0 || len(lengths) != len(weights) {
		return nil, fmt.Errorf("buckets need one weight per length, at least one: got %d lengths and %d weights", len(lengths), len(weights))
	}
	b := buckets{}
	total := 0.0
	for i, n := range lengths {
		if n < 0 || n > MaxLength {
			return nil, fmt.Errorf("bucket %d: %d tokens is outside 0..%d", i+1, n, MaxLength)
		}
		if !validWeight(weights[i]) {
			return nil, fmt.Errorf("bucket %d: weight must be a positive number, got %g", i+1, weights[i])
		}
		total += weights[i]
		b.lengths = append(b.lengths, n)
		b.cum = append(b.cum, total)
	}
	return b, nil
}

func (b buckets) Sample(rng *rand.Rand) int {
	x := rng.Float64() * b.cum[len(b.cum)-1]
	for i, c := range b.cum {
		if x < c {
			return b.lengths[i]
		}
	}
	return b.lengths[len(b.lengths)-1]
}

func (b buckets) Mean() float64 {
	sum, prev := 0.0, 0.0
	for i, c := range b.cum {
		sum += float64(b.lengths[i]) * (c - prev)
		prev = c
	}
	return sum / b.cum[len(b.cum)-1]
}

func (b buckets) Min() int {
	m := b.lengths[0]
	for _, l := range b.lengths {
		m = min(m, l)
	}
	return m
}

func (b buckets) Max() int {
	m := b.lengths[0]
	for _, l := range b.lengths {
		m = max(m, l)
	}
	return m
}

func (b buckets) String() string {
	parts := make([]string, len(b.lengths))
	prev := 0.0
	for i, c := range b.cum {
		parts[i] = fmt.Sprintf("%d:%s", b.lengths[i], strconv.FormatFloat(c-prev, 'g', -1, 64))
		prev = c
	}
	return "buckets(" + strings.Join(parts, ",") + ")"
}
