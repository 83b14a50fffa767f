package distributed

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/schedule"
)

// fed is what a Feed got.
type fed struct {
	mu      sync.Mutex
	records []record.Result
	events  []record.Event
}

// TestFeedShiftsLinesOntoTheLiveClock: a segment that started 250 ms after
// the common start by its own clock, which runs 1 s behind the
// collector's, has its records and events moved 250 ms later on the live
// clock; a line split over two uploads arrives once, whole; a line that
// is not JSON is left out; run_start is not passed on.
func TestFeedShiftsLinesOntoTheLiveClock(t *testing.T) {
	t.Parallel()
	var got fed
	base := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	_, srv := serveCollector(t, CollectorConfig{Segments: 1, StartLead: time.Second,
		Now: func() time.Time { return base }, Feed: &Feed{
			Record: func(_ int, r *record.Result) { got.mu.Lock(); got.records = append(got.records, *r); got.mu.Unlock() },
			Event:  func(_ int, e *record.Event) { got.mu.Lock(); got.events = append(got.events, *e); got.mu.Unlock() },
		}})
	// Ready: the common start is base + 1 s on the collector's clock.
	resp, err := http.Post(srv.URL+"/v1/segments/0/ready", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	segStart := base.Add(time.Second).Add(-time.Second).Add(250 * time.Millisecond) // its own clock: 1 s behind
	put := func(name string, offset int, body string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("%s/v1/segments/0/files/%s?offset=%d", srv.URL, name, offset), strings.NewReader(body))
		req.Header.Set("Content-Type", uploadType) // as a segment sends it
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("PUT %s: %s %s", name, resp.Status, b)
		}
	}
	put(rundir.Segment, 0, `{"segment":"0/1","collector":"x","clock":{"offset":1000000000,"rtt":1000}}`)
	events := fmt.Sprintf(`{"time_us":0,"kind":"run_start","message":%q}`+"\n"+`{"time_us":500000,"kind":"note","message":"hi"}`+"\n", segStart.Format(time.RFC3339Nano))
	put(rundir.Events, 0, events)
	lines := `{"id":1,"send_us":1000,"e2e_us":2000}` + "\n" + "not json\n" + `{"id":2,"send_us":3000,"e2e_us":1000}` + "\n"
	cut := strings.Index(lines, "not") - 5   // inside the first line
	put(rundir.RecordsPlain, 0, lines[:cut]) // a segment of a build before records were compressed
	put(rundir.RecordsPlain, cut, lines[cut:])

	got.mu.Lock()
	defer got.mu.Unlock()
	if len(got.records) != 2 || got.records[0].ID != 1 || got.records[0].SendUS != 251_000 || got.records[1].SendUS != 253_000 {
		t.Errorf("records %+v: want ids 1 and 2 sent at 251 ms and 253 ms on the live clock", got.records)
	}
	if len(got.events) != 1 || got.events[0].Kind != "note" || got.events[0].TimeUS != 750_000 {
		t.Errorf("events %+v: want the note alone, at 750 ms", got.events)
	}
}

// TestPhase: where a segment is, on both sides of each boundary.
func TestPhase(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		s     SegmentStatus
		now   time.Time
		start time.Time
		want  string
	}{
		{"not ready", SegmentStatus{}, start, time.Time{}, PhaseWaiting},
		{"ready, others not", SegmentStatus{Ready: true}, start, time.Time{}, PhaseReady},
		{"ready, before the start", SegmentStatus{Ready: true}, start.Add(-time.Millisecond), start, PhaseReady},
		{"started, nothing sent yet", SegmentStatus{Ready: true}, start.Add(SilentAfter), start, PhaseRunning},
		{"started, never sent", SegmentStatus{Ready: true}, start.Add(SilentAfter + time.Millisecond), start, PhaseSilent},
		{"sent just now", SegmentStatus{Ready: true, LastSeen: start.Add(10 * time.Second)}, start.Add(10*time.Second + SilentAfter), start, PhaseRunning},
		{"quiet too long", SegmentStatus{Ready: true, LastSeen: start.Add(10 * time.Second)}, start.Add(10*time.Second + SilentAfter + time.Millisecond), start, PhaseSilent},
		{"done, long quiet", SegmentStatus{Ready: true, Done: true, LastSeen: start}, start.Add(time.Hour), start, PhaseDone},
	} {
		if got := tc.s.Phase(tc.now, tc.start); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestCollectorToken: with a token set, a request without one and one
// with another are refused 401 with a reason that names the fix, in the
// segment's own error, and the right one is let through; the token never
// appears in an error.
func TestCollectorToken(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token-value"
	_, srv := serveCollector(t, CollectorConfig{Segments: 1, Now: time.Now, Token: token})
	for _, tc := range []struct {
		name, token, want string
	}{
		{"none", "", "needs its token"},
		{"wrong", "not-it", "does not match"},
		{"right", token, ""},
	} {
		_, err := MeasureClock(context.Background(), WithToken(srv.Client(), tc.token), srv.URL, time.Now)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s token: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s token: error %v, want a 401 saying %q", tc.name, err, tc.want)
		case err != nil && strings.Contains(err.Error(), token):
			t.Errorf("%s token: the error shows the token: %v", tc.name, err)
		}
	}
}

// TestNeedsToken: loopback needs none; any other address does.
func TestNeedsToken(t *testing.T) {
	t.Parallel()
	for addr, need := range map[string]bool{"127.0.0.1:1": false, "[::1]:1": false, "10.0.0.1:1": true, "0.0.0.0:1": true} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := NeedsToken(a) != ""; got != need {
			t.Errorf("%s: needs a token %v, want %v", addr, got, need)
		}
	}
}

// TestUploaderHeartbeat: a segment with no new records still reports to
// the collector every pass, with its requests in flight, so the live view
// neither shows it silent nor its in-flight count stale.
func TestUploaderHeartbeat(t *testing.T) {
	t.Parallel()
	c, srv := serveCollector(t, CollectorConfig{Segments: 2, Now: time.Now})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, rundir.Records), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	up := StartUpload(srv.Client(), srv.URL, schedule.Segment{Index: 1, Count: 2}, dir, 20*time.Millisecond, func() int { return 7 })
	deadline := time.Now().Add(10 * time.Second)
	var st SegmentStatus
	for st = c.Status()[1]; st.InFlight != 7 || st.LastSeen.IsZero(); st = c.Status()[1] {
		if time.Now().After(deadline) {
			t.Fatalf("segment 1 status %+v: want in flight 7 and a last-seen time", st)
		}
		time.Sleep(10 * time.Millisecond) // polling the collector's state with a deadline
	}
	first := st.LastSeen
	for c.Status()[1].LastSeen.Equal(first) {
		if time.Now().After(deadline) {
			t.Fatal("no second heartbeat without new records")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := up.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if st := c.Status()[1]; !st.Done || st.Bytes[rundir.Records] != 0 {
		t.Errorf("segment 1 %+v: want done with no record bytes", st)
	}
}

// TestFeedDecodesCompressedRecords: a compressed records file uploaded in
// pieces cut inside its frames reaches the Feed record by record, in
// order, each frame once it has arrived whole.
func TestFeedDecodesCompressedRecords(t *testing.T) {
	t.Parallel()
	var ids []uint64
	c, err := NewCollector(CollectorConfig{Segments: 1, Dir: t.TempDir(), Now: time.Now, Feed: &Feed{
		Record: func(_ int, r *record.Result) { ids = append(ids, r.ID) }, // calls for one segment come one at a time
	}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), rundir.Records)
	w, err := rundir.NewJSONLWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	for id := uint64(1); id <= 6; id++ {
		if err := w.Write(&record.Result{ID: id, EventsUS: []int64{10, 20, 35}}); err != nil {
			t.Fatal(err)
		}
		if id%3 == 0 {
			if err := w.Flush(); err != nil { // two frames of three records
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	z, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first := 0 // the first frame's end (a line count follows it)
	for first < len(z) && rundir.CompleteFrames(z[:first]) == 0 {
		first++
	}
	cuts := []int{0, first - 3, first + 5, len(z)} // inside frame 1, inside the line count after it, the end
	wantAfter := []int{0, 3, 6}
	for k := range 3 {
		c.feed(0, rundir.Records, z[cuts[k]:cuts[k+1]], nil)
		if len(ids) != wantAfter[k] {
			t.Fatalf("after piece %d: records %v, want %d", k+1, ids, wantAfter[k])
		}
	}
	for k, id := range ids {
		if id != uint64(k+1) {
			t.Fatalf("records %v, want 1 to 6 in order", ids)
		}
	}
}
