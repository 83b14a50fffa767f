package distributed

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/schedule"
)

// serveCollector starts a collector with cfg, in a fresh directory,
// behind a test server closed when the test ends.
func serveCollector(t testing.TB, cfg CollectorConfig) (*Collector, *httptest.Server) {
	t.Helper()
	cfg.Dir = t.TempDir()
	c, err := NewCollector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(srv.Close)
	return c, srv
}

// startCollector serves a collector for n segments on a loopback port.
func startCollector(t *testing.T, n int, o CollectOptions) (c *Collector, url string, result func() (*Merged, error)) {
	t.Helper()
	c, err := NewCollector(CollectorConfig{Segments: n, Dir: t.TempDir(), StartLead: 2 * time.Second, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.OutParent = t.TempDir()
	var m *Merged
	var cerr error
	done := make(chan struct{})
	go func() { defer close(done); m, cerr = Collect(context.Background(), c, l, o) }()
	return c, "http://" + l.Addr().String(), func() (*Merged, error) { <-done; return m, cerr }
}

// runShard is one machine of a distributed run: it waits for the
// collector's start, runs its segment, and streams its directory as it
// goes. finish false loses the machine's network once its first records
// reached the collector (lostAfterRecords), as a machine lost mid-run.
func runShard(t *testing.T, url, yaml string, seg schedule.Segment, finish bool) (string, error) {
	p, err := plan.Parse("plan.yaml", []byte(yaml+fmt.Sprintf("  segment: %s\n", seg)))
	if err != nil {
		return "", err
	}
	p.Output.Dir = t.TempDir()
	client := &http.Client{Timeout: 10 * time.Second}
	offset, err := MeasureClock(context.Background(), client, url, time.Now)
	if err != nil {
		return "", err
	}
	if !finish {
		client.Transport = &lostAfterRecords{}
	}
	start, err := Ready(context.Background(), client, url, seg)
	if err != nil {
		return "", err
	}
	var up *Uploader
	// TraceRun names the run as the CLI does (the plan's name and the
	// collector's start): the segments' shared salt derives from it.
	trace := p.Name + "@" + start.UTC().Format(time.RFC3339Nano)
	res, err := experiment.Run(context.Background(), p, experiment.Options{StartAt: start.Add(-offset.Offset), TraceRun: trace, Started: func(dir string) {
		if err := WriteSegmentInfo(dir, seg, url, offset); err != nil {
			t.Error(err)
		}
		up = StartUpload(client, url, seg, dir, 100*time.Millisecond, nil)
	}})
	if err != nil {
		return "", err
	}
	if !finish {
		close(up.stop)
		<-up.done
		return res.Dir, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return res.Dir, up.Finish(ctx)
}

// TestCollectorMergesLikeMerge: three segments stream their run
// directories to a collector, which starts them together and, once all
// are done, writes the same summary Merge makes from the segments' own
// directories.
func TestCollectorMergesLikeMerge(t *testing.T) {
	t.Parallel()
	_, url, result := startCollector(t, 3, CollectOptions{})
	yaml := fmt.Sprintf("name: collected\ntarget: {url: %s}\nworkload: {input_tokens: \"16\", output_tokens: \"4\", seed: 3}\nload:\n  rate: 40\n  duration: 800ms\n", simURL(t))
	dirs := make([]string, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() { dirs[i], errs[i] = runShard(t, url, yaml, schedule.Segment{Index: i, Count: 3}, true) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	collected, err := result()
	if err != nil {
		t.Fatal(err)
	}
	offline, err := Merge(dirs, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(collected.Dir, rundir.Summary))
	b, _ := os.ReadFile(filepath.Join(offline.Dir, rundir.Summary))
	if !bytes.Equal(a, b) || len(a) == 0 {
		t.Errorf("the collector's summary differs from the offline merge's:\ncollected: %.800s\noffline:   %.800s", a, b)
	}
	if collected.Summary.Interrupted || collected.Summary.Requests.Total == 0 {
		t.Errorf("collected %+v interrupted %v: want a whole run", collected.Summary.Requests, collected.Summary.Interrupted)
	}
	if collected.OffsetBound > 100*time.Millisecond {
		t.Logf("segments started %s apart", collected.OffsetBound)
	}
}

// TestCollectorLostSegment: a segment whose machine is lost before its
// last upload is merged as far as it got, and the merged run is marked a
// killed one; what the collector holds of it is a prefix of what it wrote.
func TestCollectorLostSegment(t *testing.T) {
	t.Parallel()
	c, url, result := startCollector(t, 2, CollectOptions{SegmentTimeout: time.Second})
	yaml := fmt.Sprintf("name: lost\ntarget: {url: %s}\nworkload: {input_tokens: \"16\", output_tokens: \"4\"}\nload:\n  concurrency: 4\n  duration: 1500ms\n", simURL(t))
	var lostDir string
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { _, errs[0] = runShard(t, url, yaml, schedule.Segment{Index: 0, Count: 2}, true) })
	wg.Go(func() { lostDir, errs[1] = runShard(t, url, yaml, schedule.Segment{Index: 1, Count: 2}, false) })
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	m, err := result()
	if err != nil {
		t.Fatal(err)
	}
	if !m.Summary.Interrupted {
		t.Error("a merged run missing a segment's end is not marked interrupted")
	}
	local, err := os.ReadFile(filepath.Join(lostDir, rundir.Records))
	if err != nil {
		t.Fatal(err)
	}
	held, err := os.ReadFile(filepath.Join(c.SegmentDir(1), rundir.Records))
	if err != nil {
		t.Fatal(err)
	}
	if len(held) == 0 || !bytes.HasPrefix(local, held) {
		t.Errorf("the collector holds %d bytes of the lost segment's %d, not a prefix of them", len(held), len(local))
	}
}

// lostAfterRecords passes requests until the first upload of records has
// gone through, then fails every one: the machine is gone.
type lostAfterRecords struct {
	mu   sync.Mutex
	gone bool
}

func (l *lostAfterRecords) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	gone := l.gone
	l.mu.Unlock()
	if gone {
		return nil, fmt.Errorf("network unreachable")
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && req.Method == http.MethodPut && strings.Contains(req.URL.Path, rundir.Records) && req.ContentLength > 0 {
		l.mu.Lock()
		l.gone = true
		l.mu.Unlock()
	}
	return resp, err
}

// TestMeasureClock: against a collector whose clock runs 3 s ahead, the
// measured offset is 3 s within half the round trip it reports.
func TestMeasureClock(t *testing.T) {
	t.Parallel()
	skew := 3 * time.Second
	_, srv := serveCollector(t, CollectorConfig{Segments: 1, Now: func() time.Time { return time.Now().Add(skew) }})
	got, err := MeasureClock(context.Background(), srv.Client(), srv.URL, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if d := got.Offset - skew; d < -got.RTT/2-time.Millisecond || d > got.RTT/2+time.Millisecond || got.RTT <= 0 {
		t.Errorf("offset %s (round trip %s), want %s within half the round trip", got.Offset, got.RTT, skew)
	}
}
