package experiment

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// TestStageChangesHaveNoHole: a staged run going 4 → 8 → 4 users
// against the simulator, with replies of 10 to 60 tokens (100–600 ms, so
// users fall out of step and a drain would take a while), changes load
// without a hole, read from the records' send and done times:
//
//   - the load never drains: from stage 1's warm-up end to stage 3's
//     issuing stop, fewer requests than the lower stage's 4 users are in
//     flight only between a reply and the same user's next request
//     (never 100 ms on end; a drain lasts a reply's length), and no
//     second passes without a reply;
//   - the users stage 2 adds start at the spawn rate: 4 users over half
//     the 500 ms warm-up, one every 62.5 ms, not all at once, so its
//     first 8 requests are spread over more than 100 ms;
//   - the users stage 3 retires finish their request: none is canceled;
//   - each record keeps the stage that sent it.
//
// Before load changes handed users over, each stage drained to 0 and
// the next started all its users at once: fewer than 4 in flight for
// the whole drain (a reply's length, here up to 600 ms) and stage 2's
// first 8 requests sent within a few ms (measured: 363 ms below 4 in
// flight, the first 8 sent within 1.8 ms).
func TestStageChangesHaveNoHole(t *testing.T) {
	t.Parallel()
	url := smallSim(t, 64)
	p := testPlan(t, `
name: hole
target: {url: `+url+`, model: tiny-sim}
workload: {input_tokens: "32", output_tokens: "uniform(10,60)"}
load:
  concurrency: 1
  warmup: 500ms
  grace: 5s
  stages: [2s@4, 2s@8, 1500ms@4]
`)
	out, err := RunStaged(context.Background(), p, Options{}, StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var recs []*record.Result
	eachRecord(t, out.Dir, func(r *record.Result) error {
		recs = append(recs, r)
		return nil
	})
	marks := stageMarks(t, out.Dir)
	if len(marks) != 3 {
		t.Fatalf("%d stage ends, want 3", len(marks))
	}
	starts := []int64{marks[0].StartUS, marks[1].StartUS, marks[2].StartUS}
	// From stage 1's warm-up end (its users are all started) to stage 3's
	// issuing stop (then they all retire).
	gap := longestBelow(recs, 4, marks[0].WarmupEndUS, marks[2].MeasureEndUS)
	t.Logf("longest stretch below 4 in flight: %s", gap)
	if gap > 100*time.Millisecond {
		t.Errorf("fewer than 4 requests in flight for %s on end: the load drained at a stage change", gap)
	}
	checkEverySecondAnswers(t, recs)
	var second []int64
	for _, r := range recs {
		switch {
		case r.Error == record.ErrCanceled:
			t.Errorf("request %d (stage %d) was canceled: a retiring user's request must be answered", r.ID, r.Step)
		case r.Step < 1 || r.Step > 3 || r.SendUS < starts[r.Step-1] || (r.Step < 3 && r.SendUS >= starts[r.Step]):
			t.Errorf("request %d sent at %d µs is in stage %d, which runs from %v", r.ID, r.SendUS, r.Step, starts)
		case r.Step == 2:
			second = append(second, r.SendUS)
		}
	}
	slices.Sort(second)
	if len(second) < 8 {
		t.Fatalf("stage 2 sent %d requests, want more than 8", len(second))
	}
	spread := time.Duration(second[7]-second[0]) * time.Microsecond
	t.Logf("stage 2's first 8 requests sent over %s", spread)
	if spread < 100*time.Millisecond {
		t.Errorf("stage 2's first 8 requests were sent within %s: its 4 new users started at once, not at the spawn rate", spread)
	}
	checkRecords(t, out.Dir, 3)
	checkRebuild(t, out.Dir)
}

// stageMarks are the stages' marks, from their stage_end events.
func stageMarks(t *testing.T, dir string) []record.StageMark {
	t.Helper()
	var marks []record.StageMark
	if _, err := rundir.ReadEvents(filepath.Join(dir, rundir.Events), func(e *record.Event) error {
		if e.Kind == record.EventStageEnd && e.Stage != nil {
			marks = append(marks, *e.Stage)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return marks
}

// longestBelow is the longest stretch within [from, to] on the run clock
// with fewer than n requests in flight.
func longestBelow(recs []*record.Result, n int, from, to int64) time.Duration {
	type edge struct {
		us    int64
		delta int
	}
	var edges []edge
	for _, r := range recs {
		edges = append(edges, edge{r.SendUS, +1}, edge{r.DoneUS(), -1})
	}
	// At one instant, a send counts before a reply: a user whose next
	// request leaves in the microsecond its last one ended never left.
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Or(cmp.Compare(a.us, b.us), cmp.Compare(b.delta, a.delta)) })
	inFlight, longest, since := 0, int64(0), int64(-1)
	for _, e := range edges {
		inFlight += e.delta
		at := min(max(e.us, from), to)
		switch {
		case inFlight < n && since < 0:
			since = at
		case inFlight >= n && since >= 0:
			longest, since = max(longest, at-since), -1
		}
	}
	if since >= 0 {
		longest = max(longest, to-since)
	}
	return time.Duration(longest) * time.Microsecond
}

// checkEverySecondAnswers: no whole second of the run passes without a
// reply.
func checkEverySecondAnswers(t *testing.T, recs []*record.Result) {
	t.Helper()
	perSecond := map[int64]int{}
	var last int64
	for _, r := range recs {
		perSecond[r.DoneUS()/1e6]++
		last = max(last, r.DoneUS()/1e6)
	}
	for s := int64(0); s < last; s++ {
		if perSecond[s] == 0 {
			t.Errorf("second %d: no reply", s)
		}
	}
}

// TestOpenLoopStageChangeHasNoGap: an open loop's next stage starts its
// arrivals at the previous stage's issuing stop, not once its last
// replies (here up to 600 ms) are in: at 20 then 40 requests/s of evenly
// spaced arrivals, no two consecutive requests are due more than 60 ms
// apart (the old runner: the drain, about a reply's length). Due times,
// not send times, so a busy host's late wake-ups cannot fail it.
func TestOpenLoopStageChangeHasNoGap(t *testing.T) {
	t.Parallel()
	url := smallSim(t, 64)
	p := testPlan(t, `
name: hole-open
target: {url: `+url+`, model: tiny-sim}
workload: {input_tokens: "32", output_tokens: "uniform(40,60)"}
load:
  rate: 1
  arrival: constant
  warmup: 200ms
  grace: 5s
  stages: [1s@20, 1s@40]
`)
	out, err := RunStaged(context.Background(), p, Options{}, StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sends []int64
	eachRecord(t, out.Dir, func(r *record.Result) error {
		sends = append(sends, r.IntendedUS)
		return nil
	})
	slices.Sort(sends)
	for i := 1; i < len(sends); i++ {
		if gap := time.Duration(sends[i]-sends[i-1]) * time.Microsecond; gap > 60*time.Millisecond {
			t.Errorf("no request due for %s from %.3f s: the arrivals paused at the stage change", gap, float64(sends[i-1])/1e6)
		}
	}
	checkRecords(t, out.Dir, 2)
}
