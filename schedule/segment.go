package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Segment is one of Count disjoint parts of a run, for running it from
// several machines (k6 calls them execution segments). Every item of the
// run, numbered in its order — closed-loop user u, open-loop arrival k,
// trace row k, request k — belongs to the segment k mod Count, so each
// segment takes every Count-th item and the union of the Count segments is
// exactly the run a single process would make: the same arrivals at the
// same offsets (so the union keeps the plan's rate and burstiness), the
// same users, the same prompts.
//
// Striping, rather than cutting the run into contiguous ranges, keeps the
// segments alike at every moment: with 3 segments, arrivals 0 1 2 3 4 5 …
// go to segments 0 1 2 0 1 2 …, and a ramp from 1 to 7 users has segment 0
// running users 0, 3 and 6 (3 of the 7), segment 1 users 1 and 4, segment
// 2 users 2 and 5, at every point of the ramp.
//
// Index is 0-based, as Kubernetes' JOB_COMPLETION_INDEX is; the zero
// Segment (Count 0) is the whole run.
type Segment struct {
	Index, Count int
}

// maxSegments bounds Count: more shards than this is a typo.
const maxSegments = 100_000

// ParseSegment reads "I/N" (0 ≤ I < N); "" is the whole run.
func ParseSegment(s string) (Segment, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Segment{}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	i, errI := strconv.Atoi(strings.TrimSpace(is))
	n, errN := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || errI != nil || errN != nil {
		return Segment{}, fmt.Errorf("%q: want INDEX/COUNT, e.g. 0/4 (the first of 4; the index is 0-based)", s)
	}
	if n < 1 || n > maxSegments || i < 0 || i >= n {
		return Segment{}, fmt.Errorf("%q: want 0 ≤ INDEX < COUNT ≤ %d", s, maxSegments)
	}
	return Segment{Index: i, Count: n}, nil
}

// Whole reports whether s is the whole run (no sharding, or 1 of 1).
func (s Segment) Whole() bool { return s.Count <= 1 }

// String is "I/N", or "" for the whole run.
func (s Segment) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Share is how many of the items 0..n-1 belong to s: ⌈(n − Index) / Count⌉.
// Example: 10 users over 4 segments are 3, 3, 2 and 2.
func (s Segment) Share(n int) int {
	if s.Whole() {
		return n
	}
	if n <= s.Index {
		return 0
	}
	return (n - s.Index + s.Count - 1) / s.Count
}

// Global is the run-wide number of the segment's local-th item.
func (s Segment) Global(local uint64) uint64 {
	if s.Whole() {
		return local
	}
	return local*uint64(s.Count) + uint64(s.Index)
}

// Arrivals is the segment's part of an arrival schedule: every Count-th
// arrival, from the Index-th, at its offset in the whole schedule.
func (s Segment) Arrivals(all interface{ Next() time.Duration }) *SegmentArrivals {
	return &SegmentArrivals{all: all, seg: s}
}

// SegmentArrivals yields a segment's arrivals (Segment.Arrivals).
type SegmentArrivals struct {
	all     interface{ Next() time.Duration }
	seg     Segment
	started bool
}

// Next returns the segment's next arrival. The skipped ones are the
// other segments'; an end marker (schedule.TraceEnd, a ramp's end) among
// them comes through, since a schedule's offsets never fall.
func (a *SegmentArrivals) Next() time.Duration {
	skip := a.seg.Count - 1
	if !a.started {
		a.started, skip = true, a.seg.Index
	}
	var at time.Duration
	for range skip + 1 {
		at = a.all.Next()
	}
	return at
}
