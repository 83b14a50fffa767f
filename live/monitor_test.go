package live

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
)

// ok is a successful streamed request ending at doneMS with the given
// TTFT and gaps between token events, all in milliseconds.
func ok(doneMS, ttftMS int64, class string, gapsMS ...int64) *record.Result {
	events := []int64{ttftMS * 1000}
	for _, g := range gapsMS {
		events = append(events, events[len(events)-1]+g*1000)
	}
	e2e := events[len(events)-1]
	return &record.Result{SendUS: doneMS*1000 - e2e, E2EUS: e2e, TTFTUS: ttftMS * 1000, EventsUS: events,
		Stream: true, OutputTokens: len(events), InputTokens: 10, Class: class}
}

// viewOf is the view of a monitor with opts, its clock stopped at the
// epoch, that started stage "d" at 0 and observed recs.
func viewOf(opts MonitorOptions, recs []*record.Result) View {
	now := time.Unix(0, 0)
	opts.Now = func() time.Time { return now }
	m := NewMonitor(opts)
	m.Start("d", 0)
	for _, r := range recs {
		m.Observe(r)
	}
	return m.View(0, 0)
}

// TestMonitorPoints: records fall in the second they finished in; a
// second closes one second after its end, empty seconds too; latencies
// are the second's own percentiles.
func TestMonitorPoints(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	m := NewMonitor(MonitorOptions{Now: func() time.Time { return now }})
	m.Start("d", 10*time.Second)
	m.Gauges(func() int { return 3 }, func() float64 { return 4 })
	for i := range 10 { // second 0: TTFT 10..100 ms, one gap of 5 ms
		m.Observe(ok(500, int64(10*(i+1)), "short", 5))
	}
	m.Observe(ok(2500, 40, "long", 5, 7)) // second 2; second 1 stays empty
	m.Observe(&record.Result{SendUS: 2600000, E2EUS: 1000, Error: record.ErrHTTP5xx, ErrorMsg: "<script>x</script>"})
	now = now.Add(3500 * time.Millisecond) // closes seconds 0..1
	m.Tick()
	v := m.View(0, 0)
	if len(v.Points) != 2 {
		t.Fatalf("%d points, want seconds 0 and 1", len(v.Points))
	}
	p0, p1 := v.Points[0], v.Points[1]
	// Histograms hold 3 significant digits: within 0.1%.
	near := func(got, want float64) bool { return math.Abs(got-want) <= want/1000 }
	if p0.Completed != 10 || !near(p0.TTFT[0], 50) || !near(p0.TTFT[2], 100) || !near(p0.ITL[0], 5) || p0.InFlight != 3 || p0.Level != 4 {
		t.Errorf("second 0: %+v", p0)
	}
	if p1.T != 1 || p1.Completed != 0 || p1.TTFT != [3]float64{} {
		t.Errorf("second 1 should be empty: %+v", p1)
	}
	m.Finish(Final{Dir: "d"})
	v = m.View(v.Seq, 0)
	if v.From != 2 || len(v.Points) != 1 || v.Points[0].Completed != 2 || v.Points[0].Failed != 1 {
		t.Fatalf("after Finish from %d: %+v", v.From, v.Points)
	}
	if len(v.Errors) != 1 || v.Errors[0].Kind != string(record.ErrHTTP5xx) || v.Errors[0].Latest[0] != "<script>x</script>" {
		t.Errorf("errors %+v", v.Errors)
	}
	if v.Classes["short"] == nil || v.Classes["short"].Requests.Succeeded != 10 || v.Classes["long"] == nil {
		t.Errorf("classes %v", v.Classes)
	}
	// A page that lingers after the run shows its length: the clock stops
	// at Finish.
	now = now.Add(time.Minute)
	if e, el := m.Elapsed(), m.View(0, 0).ElapsedS; e != 3500*time.Millisecond || el != 3.5 {
		t.Errorf("a minute after Finish: elapsed %v, view %v s; want the run's 3.5 s", e, el)
	}
}

// TestMonitorStaysBounded: a long run keeps Window points and the last
// maxMessages messages of each error kind, each cut to maxMessageLen.
func TestMonitorStaysBounded(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	m := NewMonitor(MonitorOptions{Window: 60, Now: func() time.Time { return now }})
	m.Start("d", 0)
	for i := range 1000 {
		m.Observe(&record.Result{SendUS: int64(i) * 1e6, E2EUS: 1, Error: record.ErrTimeoutBeforeTTFT,
			ErrorMsg: fmt.Sprintf("timeout %d %s", i, strings.Repeat("x", 1000))})
	}
	now = now.Add(2000 * time.Second)
	m.Tick()
	v := m.View(0, 0)
	if len(v.Points) != 60 || v.From != v.Seq-60 || v.Points[59].T != 1998 {
		t.Errorf("%d points from %d of %d, last t=%d", len(v.Points), v.From, v.Seq, v.Points[len(v.Points)-1].T)
	}
	e := v.Errors[0]
	if e.Count != 1000 || len(e.Latest) != maxMessages || !strings.HasPrefix(e.Latest[4], "timeout 999 ") ||
		len(e.Latest[4]) > maxMessageLen+len("…") {
		t.Errorf("error kind %s: count %d, %d messages, last %.30q (%d bytes)", e.Kind, e.Count, len(e.Latest), e.Latest[4], len(e.Latest[4]))
	}
}

// TestMonitorTelemetry: the page gets the listed series of each sample,
// client samples marked, gaps and other series left out, and only new
// samples after tel_since.
func TestMonitorTelemetry(t *testing.T) {
	t.Parallel()
	m := NewMonitor(MonitorOptions{})
	m.Start("d", 0)
	m.Sample(observe.Sample{TimeUS: 1_500_000, Source: "http://s/metrics", Values: map[string]float64{"queue_depth": 3, "unlisted": 1}})
	m.Sample(observe.Sample{TimeUS: 1_600_000, Source: "client", Values: map[string]float64{"client_cpu_pct": 12}})
	m.Sample(observe.Sample{TimeUS: 2_500_000, Source: "http://s/metrics", Gap: true, Error: "timeout"})
	v := m.View(0, 0)
	if len(v.Telemetry) != 2 || v.TelSeq != 2 {
		t.Fatalf("telemetry %+v (seq %d), want the two samples with values", v.Telemetry, v.TelSeq)
	}
	if s := v.Telemetry[0]; s.T != 1.5 || s.Client || len(s.Values) != 1 || s.Values["queue_depth"] != 3 {
		t.Errorf("server sample %+v", s)
	}
	if s := v.Telemetry[1]; !s.Client || s.Values["client_cpu_pct"] != 12 {
		t.Errorf("client sample %+v", s)
	}
	if v = m.View(0, 2); len(v.Telemetry) != 0 || v.TelFrom != 2 {
		t.Errorf("after tel_since=2: %d samples from %d", len(v.Telemetry), v.TelFrom)
	}
}

// TestMonitorCountsTailGaps: a stream longer than the kept offsets
// (record.MaxEventsKept) has its later gaps in EventsTail; the page's ITL
// counts them as the summary does (record.Result.EachGap), so 1,000 gaps
// of 50 ms past the cap move its p99 from the kept 5 ms to 50 ms.
func TestMonitorCountsTailGaps(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	m := NewMonitor(MonitorOptions{Now: func() time.Time { return now }})
	m.Start("d", 10*time.Second)
	r := ok(500, 10, "long", 5, 5, 5)
	r.EventsTail = &record.EventsTail{Dropped: 1000, LastUS: r.E2EUS, Gaps: [][2]int64{{50_000, 1000}}}
	m.Observe(r)
	now = now.Add(2500 * time.Millisecond)
	m.Tick()
	v := m.View(0, 0)
	if len(v.Points) == 0 {
		t.Fatal("no point closed")
	}
	if itl := v.Points[0].ITL; math.Abs(itl[2]-50) > 0.05 || math.Abs(itl[0]-50) > 0.05 {
		t.Errorf("ITL p50/p90/p99 %v: want 50 ms (1,000 tail gaps beside 3 kept ones)", itl)
	}
}

// TestMonitorStragglersAsSeries: a record finishing in a second already
// closed is counted in the totals and in no second, as series.jsonl
// (record.Series) counts it; the monitor used to add it to the oldest
// open second, so the page's per-second line and series.jsonl
// disagreed on that second.
func TestMonitorStragglersAsSeries(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	m := NewMonitor(MonitorOptions{Now: func() time.Time { return now }})
	m.Start("d", 10*time.Second)
	var windows []record.Window
	series := record.NewSeries(func(w record.Window) { windows = append(windows, w) })
	observe := func(r *record.Result) { m.Observe(r); series.Add(r) }

	observe(ok(500, 10, "")) // second 0
	now = now.Add(2500 * time.Millisecond)
	m.Tick()                   // closes second 0
	observe(ok(9_000, 10, "")) // moves the series past second 0's lag too
	observe(ok(800, 10, ""))   // finished in second 0: a straggler to both
	m.Finish(Final{Dir: "d"})
	series.Flush()

	if m.Stragglers() != 1 || series.Stragglers() != 1 {
		t.Fatalf("stragglers: monitor %d, series %d; want 1 each", m.Stragglers(), series.Stragglers())
	}
	v := m.View(0, 0)
	if v.Completed != 3 {
		t.Errorf("total completed %d, want 3 (a straggler is still a completion)", v.Completed)
	}
	byT := map[int64]int64{}
	for _, p := range v.Points {
		byT[p.T] = p.Completed
	}
	for _, w := range windows {
		if byT[w.TS] != w.Completed {
			t.Errorf("second %d: page %d completions, series.jsonl %d", w.TS, byT[w.TS], w.Completed)
		}
	}
	if byT[1] != 0 || byT[9] != 1 {
		t.Errorf("per-second completions %v: second 1 should be empty, second 9 hold one", byT)
	}
}
