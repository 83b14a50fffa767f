package schedule

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSegment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Segment
		err  string
	}{
		{"", Segment{}, ""},                     // no sharding: the whole run
		{"0/4", Segment{0, 4}, ""},              // the first of four (0-based, as JOB_COMPLETION_INDEX)
		{" 3 / 4 ", Segment{3, 4}, ""},          // spaces are fine
		{"4/4", Segment{}, "0 ≤ INDEX < COUNT"}, // the index is 0-based
		{"1/0", Segment{}, "0 ≤ INDEX < COUNT"}, // no segments at all
		{"-1/2", Segment{}, "0 ≤ INDEX < COUNT"},
		{"2", Segment{}, "want INDEX/COUNT"}, // the count is required
		{"a/b", Segment{}, "want INDEX/COUNT"},
	}
	for _, tt := range tests {
		got, err := ParseSegment(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// TestSegmentShares: the shares of N segments add up to the whole, and
// differ by at most one.
func TestSegmentShares(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n, count int
		want     []int
	}{
		{10, 4, []int{3, 3, 2, 2}}, // 10 users over 4 shards
		{3, 4, []int{1, 1, 1, 0}},  // fewer items than shards: the last has none
		{8, 1, []int{8}},           // one shard is the whole run
		{0, 3, []int{0, 0, 0}},     // nothing to share
	}
	for _, tt := range tests {
		var got []int
		for i := range tt.count {
			got = append(got, Segment{i, tt.count}.Share(tt.n))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%d over %d: %v, want %v", tt.n, tt.count, got, tt.want)
		}
	}
	if (Segment{}).Share(7) != 7 || (Segment{}).Global(5) != 5 {
		t.Error("the zero segment is not the whole run")
	}
}

// TestSegmentArrivalsUnion: N segments of a seeded Poisson and a gamma
// schedule, each taking its share, together hold exactly the whole
// schedule's arrivals, with request numbers (Global) that are the
// arrivals' places in it.
func TestSegmentArrivalsUnion(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{Poisson, Gamma, Constant} {
		whole, err := NewArrivals(kind, 50, 0.5, 7)
		if err != nil {
			t.Fatal(err)
		}
		const n = 1000
		want := make([]time.Duration, n)
		for k := range want {
			want[k] = whole.Next()
		}
		got := make([]time.Duration, n)
		const count = 3
		for i := range count {
			seg := Segment{i, count}
			all, _ := NewArrivals(kind, 50, 0.5, 7)
			arr := seg.Arrivals(all)
			for j := range seg.Share(n) {
				got[seg.Global(uint64(j))] = arr.Next()
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: the union of %d segments differs from the whole schedule", kind, count)
		}
	}
}

// TestSegmentArrivalsEnd: a trace's end marker reaches every segment, even
// when it falls among the arrivals another segment would have taken.
func TestSegmentArrivalsEnd(t *testing.T) {
	t.Parallel()
	tr := &fixedArrivals{at: []time.Duration{1, 2, 3, 4}}
	arr := Segment{1, 3}.Arrivals(tr)
	if got := []time.Duration{arr.Next(), arr.Next()}; got[0] != 2 || got[1] != TraceEnd {
		t.Errorf("segment 1/3 of 4 arrivals: %v, want [2 TraceEnd]", got)
	}
}

// fixedArrivals yields its offsets, then TraceEnd.
type fixedArrivals struct {
	at []time.Duration
	k  int
}

func (f *fixedArrivals) Next() time.Duration {
	if f.k >= len(f.at) {
		return TraceEnd
	}
	f.k++
	return f.at[f.k-1]
}
