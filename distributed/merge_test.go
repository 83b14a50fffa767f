package distributed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// simURL serves the simulator's fast "tiny" profile for the test.
func simURL(t *testing.T) string {
	t.Helper()
	_, url := enginetest.StartSim(t, sim.Config{Profile: enginetest.TinyProfile(t), Seed: 1})
	return url
}

// runSegments runs the plan's n segments at once, started together, and
// returns their run directories.
func runSegments(t *testing.T, yaml string, n int, run func(context.Context, *plan.Plan, experiment.Options) (*experiment.Outcome, error)) []string {
	t.Helper()
	out := t.TempDir()
	// Time for every segment to build its run and probe the target
	// before the start, under the race detector on a busy machine.
	start := time.Now().Add(2 * time.Second)
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		p, err := plan.Parse("plan.yaml", []byte(yaml+fmt.Sprintf("  segment: %d/%d\n", i, n)))
		if err != nil {
			t.Fatal(err)
		}
		p.Output.Dir = filepath.Join(out, fmt.Sprint(i))
		wg.Go(func() {
			res, err := run(context.Background(), p, experiment.Options{StartAt: start})
			if err == nil {
				dirs[i] = res.Dir
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

// readAll is a directory's records.
func readAll(t *testing.T, dir string) []*record.Result {
	t.Helper()
	var out []*record.Result
	if _, err := rundir.ReadRecords(filepath.Join(dir, rundir.Records), func(r *record.Result) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMergeOpenLoopIsTheWholeSchedule: three segments of a seeded Poisson
// run together send exactly the single-process schedule — request k due at
// arrival k's offset, none missing, none twice — and their merge counts
// every record once, its latency figures those of all the records.
func TestMergeOpenLoopIsTheWholeSchedule(t *testing.T) {
	t.Parallel()
	url := simURL(t)
	yaml := fmt.Sprintf(`name: shards
target: {url: %s}
workload: {input_tokens: "16", output_tokens: "4", seed: 5}
load:
  rate: 60
  duration: 1s
`, url)
	dirs := runSegments(t, yaml, 3, experiment.Run)

	whole, err := schedule.NewArrivals(schedule.Poisson, 60, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for at := whole.Next(); at < time.Second; at = whole.Next() {
		want = append(want, at.Microseconds())
	}
	// A process whose pacer wakes after its stop at the duration skips an
	// arrival due in the last instants, alone or sharded; every earlier
	// one must be there, once, at its offset.
	const tail = 100 * time.Millisecond
	sent := map[uint64]bool{}
	var all []*record.Result
	for _, dir := range dirs {
		for _, r := range readAll(t, dir) {
			all = append(all, r)
			switch {
			case r.ID >= uint64(len(want)):
				t.Fatalf("%s: request %d beyond the schedule's %d arrivals", dir, r.ID, len(want))
			case sent[r.ID]:
				t.Fatalf("request %d sent twice", r.ID)
			case r.IntendedUS != want[r.ID]:
				t.Errorf("request %d due at %d µs, want the schedule's %d µs", r.ID, r.IntendedUS, want[r.ID])
			}
			sent[r.ID] = true
		}
	}
	for k, at := range want {
		if !sent[uint64(k)] && at < (time.Second-tail).Microseconds() {
			t.Errorf("arrival %d at %d µs was sent by no segment", k, at)
		}
	}

	m, err := Merge(dirs, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := m.Summary
	if s.Requests.Total != int64(len(all)) || s.Mode != record.ModeOpen || s.Interrupted {
		t.Errorf("merged %+v mode %s interrupted %v: want the segments' %d requests in an open loop", s.Requests, s.Mode, s.Interrupted, len(all))
	}
	// Each segment's own figures are its own records'.
	if len(s.Segments) != 3 {
		t.Fatalf("%d segment entries, want 3", len(s.Segments))
	}
	for i, seg := range s.Segments {
		if own := int64(len(readAll(t, dirs[i]))); seg.Segment != fmt.Sprintf("%d/3", i) || seg.Requests.Total != own {
			t.Errorf("segment entry %+v: want %d/3 with its %d records", seg, i, own)
		}
	}
	agg := record.NewAggregate()
	for _, r := range all {
		agg.Add(r)
	}
	if e2e := agg.Summary(record.RunInfo{EndUS: 1}).Metrics.E2E; e2e != s.Metrics.E2E {
		t.Errorf("merged E2E %+v, want all records' %+v", s.Metrics.E2E, e2e)
	}
	if m.OffsetBound > 50*time.Millisecond {
		t.Logf("segments started %s apart", m.OffsetBound)
	}
	// The merged run_end counts every segment's records, so a rebuild can
	// tell what a segment's damaged records file lost.
	var counted int64
	if _, err := rundir.ReadEvents(filepath.Join(m.Dir, rundir.Events), func(e *record.Event) error {
		if e.Kind == record.EventRunEnd {
			counted = e.Records
		}
		return nil
	}); err != nil || counted != int64(len(all)) {
		t.Errorf("merged run_end counts %d records (%v), want the segments' %d", counted, err, len(all))
	}
	checkRebuilds(t, m.Dir)
}

// TestMergeStagedClosedLoop: two segments of a staged closed loop (4 then
// 6 users) merge into one run whose steps hold both segments' requests,
// judged against the whole load.
func TestMergeStagedClosedLoop(t *testing.T) {
	t.Parallel()
	url := simURL(t)
	yaml := fmt.Sprintf(`name: staged-shards
target: {url: %s}
workload: {input_tokens: "16", output_tokens: "4"}
load:
  concurrency: 4
  stages: [500ms@4, 500ms@6]
`, url)
	dirs := runSegments(t, yaml, 2, experiment.Run)
	perStep := map[int]int64{}
	for _, dir := range dirs {
		for _, r := range readAll(t, dir) {
			perStep[r.Step]++
		}
	}
	m, err := Merge(dirs, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := m.Summary
	if len(s.Steps) != 2 {
		t.Fatalf("%d steps, want 2", len(s.Steps))
	}
	for i, st := range s.Steps {
		if st.Target != []float64{4, 6}[i] || st.Requests.Total != perStep[i+1] {
			t.Errorf("step %d: target %v, %d requests; want %v and the segments' %d", i+1, st.Target, st.Requests.Total, []float64{4, 6}[i], perStep[i+1])
		}
	}
	checkRebuilds(t, m.Dir)
}

// checkRebuilds: the merged directory is a run directory like any other.
func checkRebuilds(t *testing.T, dir string) {
	t.Helper()
	before, err := os.ReadFile(filepath.Join(dir, rundir.Summary))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := summary.Rebuild(dir); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, rundir.Summary))
	if string(before) != string(after) {
		t.Error("the merged directory does not rebuild to the same summary")
	}
}

// TestMergeRefuses: what cannot be merged is refused, naming the problem.
func TestMergeRefuses(t *testing.T) {
	t.Parallel()
	url := simURL(t)
	yaml := fmt.Sprintf("name: r\ntarget: {url: %s}\nworkload: {input_tokens: \"8\", output_tokens: \"2\"}\nload:\n  concurrency: 2\n  duration: 200ms\n", url)
	dirs := runSegments(t, yaml, 2, experiment.Run)
	other := runSegments(t, strings.Replace(yaml, `output_tokens: "2"`, `output_tokens: "3"`, 1), 2, experiment.Run)
	whole, err := plan.Parse("plan.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	whole.Output.Dir = t.TempDir()
	single, err := experiment.Run(context.Background(), whole, experiment.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dirs []string
		want string
	}{
		{dirs[:1], "1 of the 2 segments"},                 // a segment is missing
		{[]string{dirs[0], dirs[0]}, "both segment 0/2"},  // the same segment twice
		{[]string{dirs[0], other[1]}, "different plans"},  // segments of two runs
		{[]string{single.Dir}, "not a segment of a run"},  // a whole run
		{[]string{t.TempDir()}, "is not a run directory"}, // not a run at all
		{nil, "no run directories"},
	}
	for _, tt := range tests {
		if _, err := Merge(tt.dirs, t.TempDir()); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Merge(%v) err = %v, want %q", tt.dirs, err, tt.want)
		}
	}
}

// TestServerScraper: the merged run keeps the server samples of the
// segment whose scrape covers the longest span, the lowest index on a
// tie, and none when no segment scraped.
func TestServerScraper(t *testing.T) {
	t.Parallel()
	server := func(us ...int64) []observe.Sample {
		var out []observe.Sample
		for _, t := range us {
			out = append(out, observe.Sample{TimeUS: t, Source: "metrics"})
		}
		return out
	}
	client := []observe.Sample{{TimeUS: 0, Source: "client"}, {TimeUS: 99_000_000, Source: "client"}}
	for _, tc := range []struct {
		name    string
		samples [][]observe.Sample
		want    int
	}{
		{"segment 0 lost early", [][]observe.Sample{server(0, 2e6), server(0, 9e6), server(0, 8e6)}, 1},
		{"a tie", [][]observe.Sample{server(0, 9e6), server(1e6, 10e6)}, 0},
		{"client samples do not count", [][]observe.Sample{append(server(0, 1e6), client...), server(0, 5e6)}, 1},
		{"no scrape", [][]observe.Sample{client, nil}, -1},
	} {
		if got := serverScraper(tc.samples); got != tc.want {
			t.Errorf("%s: segment %d, want %d", tc.name, got, tc.want)
		}
	}
}
